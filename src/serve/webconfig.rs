//! `brr exporter --web-config FILE`: the Prometheus exporter-toolkit's web
//! configuration (TLS with optional client certificates, basic auth with
//! bcrypt hashes, extra response headers), read once at start, and the
//! password check every request passes before it is routed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use subtle::ConstantTimeEq;

use super::http::{HttpRequest, Response};
use crate::error::{BrrError, Result};

/// The file as the exporter-toolkit writes it; a key brr does not know is
/// an error rather than a setting silently not applied.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebConfigFile {
    tls_server_config: Option<TlsFile>,
    http_server_config: Option<HttpFile>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<String>,
    key_file: Option<String>,
    client_ca_file: Option<String>,
    client_auth_type: Option<String>,
    min_version: Option<String>,
    max_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    /// Accepted for compatibility: brr answers HTTP/1.1 only, which every
    /// HTTP/2 client falls back to (ALPN offers only `http/1.1`).
    #[allow(dead_code)]
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// Which requests need a password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthScope {
    /// Every path (the exporter-toolkit's rule).
    #[default]
    Everything,
    /// Only the profile endpoint (`--profiles-auth-only`).
    ProfilesOnly,
}

/// What a web config sets up.
pub(crate) struct WebConfig {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Header lines added to every response, each ending in CRLF.
    pub extra_headers: String,
    pub door: Door,
}

/// Headers brr writes itself, which a web config may not set.
const OWN_HEADERS: [&str; 9] = [
    "content-type",
    "content-length",
    "content-encoding",
    "connection",
    "vary",
    "www-authenticate",
    "allow",
    "retry-after",
    "authorization",
];

/// Read and check `path`; every problem is one `brr:` line naming the
/// file (exit 2).
pub(crate) fn load(path: &Path, scope: AuthScope) -> Result<WebConfig> {
    let bad = |problem: String| BrrError::Usage(format!("brr: {}: {problem}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let file: WebConfigFile = if text.trim().is_empty() {
        WebConfigFile::default()
    } else {
        serde_norway::from_str(&text).map_err(|e| bad(e.to_string()))?
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let tls = file
        .tls_server_config
        .map(|t| tls_config(&t, dir).map(Arc::new))
        .transpose()
        .map_err(bad)?;
    let extra_headers = headers(file.http_server_config.and_then(|h| h.headers)).map_err(bad)?;
    let users = file.basic_auth_users.unwrap_or_default();
    if scope == AuthScope::ProfilesOnly && users.is_empty() {
        return Err(bad(
            "--profiles-auth-only needs basic_auth_users in the file".into(),
        ));
    }
    let door = Door::new(users, scope).map_err(bad)?;
    Ok(WebConfig {
        tls,
        extra_headers,
        door,
    })
}

fn headers(headers: Option<BTreeMap<String, String>>) -> std::result::Result<String, String> {
    let mut lines = String::new();
    for (name, value) in headers.unwrap_or_default() {
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!(
                "http_server_config: header name {name:?} is not a token"
            ));
        }
        if OWN_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "http_server_config: header {name} is written by brr itself"
            ));
        }
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(format!(
                "http_server_config: the value of header {name} holds a control character"
            ));
        }
        lines.push_str(&format!("{name}: {value}\r\n"));
    }
    Ok(lines)
}

/// A path in the file, relative to the file's own folder (as the
/// exporter-toolkit reads it).
fn resolve(dir: &Path, file: &str) -> PathBuf {
    dir.join(file)
}

fn version(
    name: &str,
    value: Option<&str>,
) -> std::result::Result<Option<&'static rustls::SupportedProtocolVersion>, String> {
    match value {
        None => Ok(None),
        Some("TLS12") => Ok(Some(&rustls::version::TLS12)),
        Some("TLS13") => Ok(Some(&rustls::version::TLS13)),
        Some(v @ ("TLS10" | "TLS11")) => Err(format!(
            "tls_server_config: {name} {v} is not offered: brr speaks TLS 1.2 and 1.3"
        )),
        Some(v) => Err(format!(
            "tls_server_config: unknown {name} {v:?} (TLS12 or TLS13)"
        )),
    }
}

/// Whether and how client certificates are asked for.
enum ClientAuth {
    None,
    VerifyIfGiven,
    Require,
}

fn client_auth(t: &TlsFile) -> std::result::Result<ClientAuth, String> {
    let auth = match t.client_auth_type.as_deref() {
        None | Some("" | "NoClientCert") => ClientAuth::None,
        Some("VerifyClientCertIfGiven") => ClientAuth::VerifyIfGiven,
        Some("RequireAndVerifyClientCert") => ClientAuth::Require,
        Some(v @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert")) => {
            return Err(format!(
                "tls_server_config: client_auth_type {v} accepts certificates nobody verified; brr offers VerifyClientCertIfGiven and RequireAndVerifyClientCert"
            ))
        }
        Some(v) => return Err(format!("tls_server_config: unknown client_auth_type {v:?}")),
    };
    match (&auth, &t.client_ca_file) {
        (ClientAuth::None, Some(_)) => Err(
            "tls_server_config: client_ca_file is set but client_auth_type does not ask for client certificates"
                .into(),
        ),
        (ClientAuth::VerifyIfGiven | ClientAuth::Require, None) => Err(
            "tls_server_config: client_auth_type verifies client certificates but no client_ca_file is set"
                .into(),
        ),
        _ => Ok(auth),
    }
}

fn tls_config(t: &TlsFile, dir: &Path) -> std::result::Result<rustls::ServerConfig, String> {
    let (Some(cert_file), Some(key_file)) = (&t.cert_file, &t.key_file) else {
        return Err("tls_server_config needs both cert_file and key_file".into());
    };
    let min = version("min_version", t.min_version.as_deref())?;
    let max = version("max_version", t.max_version.as_deref())?;
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> =
        vec![&rustls::version::TLS12, &rustls::version::TLS13];
    if min == Some(&rustls::version::TLS13) {
        versions.retain(|v| v.version == rustls::ProtocolVersion::TLSv1_3);
    }
    if max == Some(&rustls::version::TLS12) {
        versions.retain(|v| v.version == rustls::ProtocolVersion::TLSv1_2);
    }
    if versions.is_empty() {
        return Err("tls_server_config: min_version is above max_version".into());
    }
    let auth = client_auth(t)?;
    let cert_path = resolve(dir, cert_file);
    let certs = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| format!("cert_file {}: {e}", cert_path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "cert_file {}: no certificate in it",
            cert_path.display()
        ));
    }
    let key_path = resolve(dir, key_file);
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| format!("key_file {}: {e}", key_path.display()))?;
    // rustls marks ring's provider deprecated because ring has no
    // post-quantum key exchange; aws-lc-rs has one but needs cmake and a
    // C build that the static release does not carry (docs/decisions.md).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("tls_server_config: {e}"))?;
    let builder = match (&auth, &t.client_ca_file) {
        (ClientAuth::VerifyIfGiven | ClientAuth::Require, Some(ca_file)) => {
            let ca_path = resolve(dir, ca_file);
            let mut roots = rustls::RootCertStore::empty();
            let cas = CertificateDer::pem_file_iter(&ca_path)
                .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
            for ca in cas {
                roots
                    .add(ca)
                    .map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "client_ca_file {}: no certificate in it",
                    ca_path.display()
                ));
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            );
            let verifier = match auth {
                ClientAuth::VerifyIfGiven => verifier.allow_unauthenticated(),
                _ => verifier,
            };
            let verifier = verifier
                .build()
                .map_err(|e| format!("client_ca_file {}: {e}", ca_path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        _ => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        format!(
            "cert_file {} and key_file {}: {e}",
            cert_path.display(),
            key_path.display()
        )
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Most verified (user, password) pairs remembered; beyond it the memory
/// starts over (only a right password adds one).
const CACHE_SIZE: usize = 64;

/// Basic auth: the users' bcrypt hashes and the pairs already verified.
pub(crate) struct Door {
    users: BTreeMap<String, String>,
    scope: AuthScope,
    /// A hash of the users' cost for names nobody has, so that an unknown
    /// name takes as long to refuse as a wrong password.
    decoy: String,
    /// SHA-256 of each (user, hash, password) that bcrypt accepted: bcrypt
    /// is slow on purpose (tens of milliseconds a check), too slow for
    /// every scrape.
    verified: Mutex<Vec<[u8; 32]>>,
}

impl Door {
    fn new(users: BTreeMap<String, String>, scope: AuthScope) -> std::result::Result<Door, String> {
        let mut cost = bcrypt::DEFAULT_COST;
        for (user, hash) in &users {
            let parts: bcrypt::HashParts = hash.parse().map_err(|e| {
                format!("basic_auth_users: the hash of {user:?} is not bcrypt: {e}")
            })?;
            cost = parts.get_cost();
        }
        if users.keys().any(|u| u.contains(':')) {
            return Err("basic_auth_users: a user name may not hold ':'".into());
        }
        let decoy = if users.is_empty() {
            String::new()
        } else {
            bcrypt::hash_with_salt(b"brr-decoy", cost, *b"brr-decoy-salt!!")
                .map_err(|e| format!("basic_auth_users: {e}"))?
                .to_string()
        };
        Ok(Door {
            users,
            scope,
            decoy,
            verified: Mutex::new(Vec::new()),
        })
    }

    /// Whether `path` needs a password.
    fn guards(&self, path: &str) -> bool {
        !self.users.is_empty()
            && (self.scope == AuthScope::Everything || path == super::profiles::PATH)
    }

    /// The 401 to answer `req` with, or None when it may pass. Checked
    /// before routing, so a refused request starts nothing.
    pub(crate) fn refuse(&self, req: &HttpRequest) -> Option<Response> {
        if !self.guards(&req.path) {
            return None;
        }
        let allowed = req
            .authorization
            .as_deref()
            .and_then(basic_credentials)
            .is_some_and(|(user, password)| self.check(&user, &password));
        if allowed {
            return None;
        }
        let mut r = Response::error(401);
        r.headers
            .push(("WWW-Authenticate", "Basic realm=\"brr\"".into()));
        Some(r)
    }

    fn check(&self, user: &str, password: &[u8]) -> bool {
        let Some(hash) = self.users.get(user) else {
            let _ = bcrypt::verify(password, &self.decoy);
            return false;
        };
        let key = {
            let mut d = ring::digest::Context::new(&ring::digest::SHA256);
            for part in [user.as_bytes(), hash.as_bytes(), password] {
                d.update(&(part.len() as u64).to_le_bytes());
                d.update(part);
            }
            let mut key = [0u8; 32];
            key.copy_from_slice(d.finish().as_ref());
            key
        };
        let known = |verified: &Vec<[u8; 32]>| {
            verified
                .iter()
                .fold(subtle::Choice::from(0), |seen, k| seen | k.ct_eq(&key))
                .into()
        };
        if self.verified.lock().is_ok_and(|v| known(&v)) {
            return true;
        }
        if !bcrypt::verify(password, hash).unwrap_or(false) {
            return false;
        }
        if let Ok(mut v) = self.verified.lock() {
            if v.len() >= CACHE_SIZE {
                v.clear();
            }
            v.push(key);
        }
        true
    }
}

/// User and password of a `Basic` Authorization value.
fn basic_credentials(value: &str) -> Option<(String, Vec<u8>)> {
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = raw.iter().position(|&b| b == b':')?;
    let user = String::from_utf8(raw.get(..colon)?.to_vec()).ok()?;
    Some((user, raw.get(colon + 1..)?.to_vec()))
}

#[cfg(test)]
#[path = "webconfig_tests.rs"]
mod tests;
