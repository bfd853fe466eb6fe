//! Basic auth (`basic_auth_users` in the web config file): every endpoint asks for a user and
//! password whose bcrypt hash the file holds, as exporter-toolkit's `webHandler` does, and
//! answers 401 with `WWW-Authenticate: Basic` otherwise.
//!
//! bcrypt is slow on purpose (137 ms a check at cost 10 in a debug build here), and the runtime has one thread for
//! every connection plus two blocking threads, one of which renders `/metrics`. So:
//!
//! - a password that was checked once is remembered (user, hash, password), as
//!   exporter-toolkit's cache does, and compared in constant time: a scraper pays bcrypt once,
//!   not per scrape. Only successes are kept, so a flood of wrong passwords cannot evict them;
//! - bcrypt runs on a blocking thread, one check at a time (exporter-toolkit's `bcryptMtx`),
//!   so a check never stalls the runtime and the other blocking thread stays free to render;
//! - at most [`MAX_WAITING_CHECKS`] checks wait; past that a request that needs one is answered
//!   503 at once, so a flood of wrong passwords holds neither memory nor connections;
//! - an unknown user is checked against a known user's hash (same cost), so timing does not
//!   tell which users exist.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;

/// Checks that may wait for bcrypt at once, the one running included.
pub const MAX_WAITING_CHECKS: usize = 8;

/// Passwords remembered after a successful check. Only a correct password gets in, so this
/// bounds what reloads with changed hashes leave behind, not what clients can add.
const REMEMBERED: usize = 100;

/// The bcrypt costs a hash may have. bcrypt itself (Go's `golang.org/x/crypto/bcrypt`, which
/// exporter-toolkit checks every hash with at start-up, and the `bcrypt` crate) takes 4 to 31,
/// but each step doubles the time of a check, and 31 is days. Checks run one at a time, so a
/// cost past 14 (about 1 s a check in an optimised build, 3 s in a debug build here) would make
/// a scraper's first scrape wait that long behind each check before it, and time out.
pub const COSTS: std::ops::RangeInclusive<u32> = 4..=14;

/// Why a `basic_auth_users` hash is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadHash {
    /// Not of the form `$2y$10$` and 53 characters.
    Malformed(String),
    /// A cost outside [`COSTS`].
    Cost(u32),
}

/// `basic_auth_users`: user name to bcrypt hash. Empty: no authentication.
#[derive(Debug, Default, Clone)]
pub struct Users(BTreeMap<String, String>);

impl Users {
    /// Checks each hash's form (`$2y$10$...`), as exporter-toolkit does at start-up, and its
    /// cost; `Err` names the first bad user.
    pub fn new(users: BTreeMap<String, String>) -> Result<Users, (String, BadHash)> {
        for (user, hash) in &users {
            let parts = hash
                .parse::<bcrypt::HashParts>()
                .map_err(|e| (user.clone(), BadHash::Malformed(e.to_string())))?;
            if !COSTS.contains(&parts.get_cost()) {
                return Err((user.clone(), BadHash::Cost(parts.get_cost())));
            }
        }
        Ok(Users(users))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a request's credentials earned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    Denied,
    /// Too many password checks are waiting: try again.
    Busy,
}

/// One remembered success.
struct Verified {
    user: String,
    hash: String,
    password: Vec<u8>,
}

/// Checks credentials against [`Users`]; shared by every connection and kept across reloads
/// (a remembered password counts only while its user's hash is unchanged).
pub struct Checker {
    verified: Arc<Mutex<VecDeque<Verified>>>,
    bcrypt: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker {
            verified: Arc::default(),
            bcrypt: Arc::new(Semaphore::new(1)),
            waiting: Arc::default(),
        }
    }
}

/// Counts a check as waiting until dropped.
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Checker {
    /// Whether the request's `Authorization` header names a user and the right password.
    pub async fn check(&self, users: &Users, headers: &HeaderMap) -> Verdict {
        if users.is_empty() {
            return Verdict::Allowed;
        }
        let Some((user, password)) = credentials(headers) else {
            return Verdict::Denied;
        };
        let (hash, known) = match users.0.get(&user) {
            Some(hash) => (hash.clone(), true),
            // Not empty, checked above.
            None => (users.0.values().next().cloned().unwrap_or_default(), false),
        };
        if known && self.remembers(&user, &hash, &password) {
            return Verdict::Allowed;
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING_CHECKS {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Verdict::Busy;
        }
        let waiting = Waiting(Arc::clone(&self.waiting));
        let Ok(turn) = Arc::clone(&self.bcrypt).acquire_owned().await else {
            return Verdict::Denied;
        };
        // The turn and the count go with the blocking task: a request dropped mid-check (its
        // client gone, its timeout passed) must not let a second bcrypt start beside it. The
        // task remembers a success itself, so a scraper that gave up waiting finds it next time.
        let verified = Arc::clone(&self.verified);
        tokio::task::spawn_blocking(move || {
            let _held = (turn, waiting);
            let matched = bcrypt::verify(&password, &hash).unwrap_or(false);
            if !(matched && known) {
                return Verdict::Denied;
            }
            remember(&verified, user, hash, password);
            Verdict::Allowed
        })
        .await
        .unwrap_or(Verdict::Denied)
    }

    fn remembers(&self, user: &str, hash: &str, password: &[u8]) -> bool {
        let verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        verified.iter().any(|v| {
            v.user == user
                && v.hash == hash
                && v.password.len() == password.len()
                && bool::from(v.password.ct_eq(password))
        })
    }
}

fn remember(verified: &Mutex<VecDeque<Verified>>, user: String, hash: String, password: Vec<u8>) {
    let mut verified = verified.lock().unwrap_or_else(PoisonError::into_inner);
    if verified.len() >= REMEMBERED {
        verified.pop_front();
    }
    verified.push_back(Verified {
        user,
        hash,
        password,
    });
}

/// The user and password of an `Authorization: Basic` header.
fn credentials(headers: &HeaderMap) -> Option<(String, Vec<u8>)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    let user = String::from_utf8(decoded[..colon].to_vec()).ok()?;
    Some((user, decoded[colon + 1..].to_vec()))
}

/// 401, asking for basic auth.
pub fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic"))],
        "Unauthorized\n",
    )
        .into_response()
}

/// 503: too many password checks wait already.
pub fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, HeaderValue::from_static("1"))],
        "too many password checks at once; try again\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(pairs: &[(&str, &str)]) -> Users {
        Users::new(
            pairs
                .iter()
                .map(|(u, p)| (u.to_string(), bcrypt::hash(p, 4).unwrap()))
                .collect(),
        )
        .unwrap()
    }

    fn basic(user: &str, password: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        headers.insert(
            header::AUTHORIZATION,
            format!("Basic {encoded}").parse().unwrap(),
        );
        headers
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn the_right_password_in_and_everything_else_out() {
        let users = users(&[("prometheus", "s3cret:with colon")]);
        let checker = Checker::default();
        block_on(async {
            let check = |h: HeaderMap| {
                let (checker, users) = (&checker, &users);
                async move { checker.check(users, &h).await }
            };
            assert_eq!(
                check(basic("prometheus", "s3cret:with colon")).await,
                Verdict::Allowed
            );
            // Remembered now, and still only for that password.
            assert_eq!(
                check(basic("prometheus", "s3cret:with colon")).await,
                Verdict::Allowed
            );
            assert_eq!(check(basic("prometheus", "s3cret")).await, Verdict::Denied);
            assert_eq!(
                check(basic("nobody", "s3cret:with colon")).await,
                Verdict::Denied
            );
            assert_eq!(check(HeaderMap::new()).await, Verdict::Denied);
            let mut bearer = HeaderMap::new();
            bearer.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
            assert_eq!(check(bearer).await, Verdict::Denied);
        });
    }

    #[test]
    fn no_users_means_no_authentication() {
        let checker = Checker::default();
        assert_eq!(
            block_on(checker.check(&Users::default(), &HeaderMap::new())),
            Verdict::Allowed
        );
    }

    #[test]
    fn a_remembered_password_no_longer_counts_once_the_hash_changes() {
        let checker = Checker::default();
        let before = users(&[("p", "old")]);
        assert_eq!(
            block_on(checker.check(&before, &basic("p", "old"))),
            Verdict::Allowed
        );
        let after = users(&[("p", "new")]);
        assert_eq!(
            block_on(checker.check(&after, &basic("p", "old"))),
            Verdict::Denied
        );
    }

    #[test]
    fn a_malformed_hash_names_its_user() {
        let bad = BTreeMap::from([("alice".to_string(), "secret".to_string())]);
        assert_eq!(Users::new(bad).unwrap_err().0, "alice");
    }

    /// A hash of `password` whose cost field says `cost`: checking against it takes as long
    /// as `cost` says, without the test paying for making it.
    fn hash_at_cost(password: &str, cost: u32) -> String {
        bcrypt::hash(password, 4)
            .unwrap()
            .replacen("$04$", &format!("${cost:02}$"), 1)
    }

    #[test]
    fn bcrypt_costs_31_3_and_99_are_refused_and_4_to_14_taken() {
        for cost in [31, 3, 99, 15] {
            let users = BTreeMap::from([("alice".to_string(), hash_at_cost("pw", cost))]);
            assert_eq!(
                Users::new(users).unwrap_err(),
                ("alice".to_string(), BadHash::Cost(cost)),
                "cost {cost}"
            );
        }
        for cost in [4, 10, 14] {
            let users = BTreeMap::from([("alice".to_string(), hash_at_cost("pw", cost))]);
            assert!(Users::new(users).is_ok(), "cost {cost}");
        }
    }
}
