//! PEM text for TLS, given inline in a config (`cert`) or as a file (`cert_file`), and the
//! certificates and private keys in it.

use std::path::Path;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::TlsError;
use crate::bounded_read::{read_regular, SMALL_FILE_LIMIT};

/// PEM bytes, with the key that gave them and how messages name them (the file's path, or
/// the inline key).
#[derive(Debug, Clone)]
pub struct Pem {
    pub bytes: Vec<u8>,
    /// The key that gave it (`cert_file`, `cert`).
    pub key: String,
    /// The file's path, or `key` for PEM text written in the config.
    pub origin: String,
}

/// Where a PEM comes from: the inline key and text, and the file key and path.
pub struct PemSource<'a> {
    pub inline: (&'a str, Option<&'a str>),
    pub file: (&'a str, Option<&'a Path>),
}

impl PemSource<'_> {
    /// Reads the PEM, if either key is set (not both). A relative path is read from `dir`;
    /// `unreadable_fix` says what to do about a file that cannot be read.
    pub fn read(&self, dir: &Path, unreadable_fix: &str) -> Result<Option<Pem>, TlsError> {
        let (inline_key, inline) = self.inline;
        let (file_key, file) = self.file;
        let inline = inline.filter(|t| !t.is_empty());
        let file = file.filter(|p| !p.as_os_str().is_empty());
        match (inline, file) {
            (Some(_), Some(_)) => Err(TlsError::new(
                inline_key,
                format!("both {inline_key} and {file_key} are set"),
                format!("keep one of them: {inline_key} (PEM text) or {file_key} (a path)"),
            )),
            (Some(text), None) => Ok(Some(Pem {
                bytes: text.as_bytes().to_vec(),
                key: inline_key.to_string(),
                origin: inline_key.to_string(),
            })),
            (None, Some(path)) => read_file(file_key, &dir.join(path), unreadable_fix).map(Some),
            (None, None) => Ok(None),
        }
    }
}

/// The PEM file at `path`, given as `key`.
pub fn read_file(key: &str, path: &Path, unreadable_fix: &str) -> Result<Pem, TlsError> {
    let bytes = read_regular(path, SMALL_FILE_LIMIT).map_err(|e| {
        TlsError::new(
            key,
            format!("cannot read {}: {e}", path.display()),
            e.fix(unreadable_fix),
        )
    })?;
    Ok(Pem {
        bytes,
        key: key.to_string(),
        origin: path.display().to_string(),
    })
}

impl Pem {
    /// The certificates in it: at least one.
    pub fn certificates(&self) -> Result<Vec<CertificateDer<'static>>, TlsError> {
        const FIX: &str = "give a file with -----BEGIN CERTIFICATE----- blocks";
        let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&self.bytes).collect();
        match certs {
            Ok(certs) if !certs.is_empty() => Ok(certs),
            Ok(_) => Err(TlsError::new(
                &self.key,
                format!("{} holds no PEM certificate", self.origin),
                FIX,
            )),
            Err(e) => Err(TlsError::new(
                &self.key,
                format!("{} is not PEM: {e}", self.origin),
                FIX,
            )),
        }
    }

    /// The private key in it; `fix` says which key was expected.
    pub fn private_key(&self, fix: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
        PrivateKeyDer::from_pem_slice(&self.bytes).map_err(|e| {
            TlsError::new(
                &self.key,
                format!("{} holds no usable private key: {e}", self.origin),
                fix,
            )
        })
    }
}
