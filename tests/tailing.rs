//! Tailing scenarios: rotation, truncation, late files, hostile bytes.
