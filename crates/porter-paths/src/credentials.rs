//! Files where credentials live, and bytes that hold a secret: what a
//! server refuses to send anywhere, whatever the model asks.

use std::path::{Component, Path};

use memchr::memmem;

/// Folders whose every file is a credential or a key.
const CREDENTIAL_DIRS: [(&str, &str); 7] = [
    (".ssh", "a file in .ssh, where SSH keys live"),
    (".gnupg", "a file in .gnupg, where GnuPG keys live"),
    (".aws", "a file in .aws, where AWS credentials live"),
    (
        ".kube",
        "a file in .kube, where Kubernetes credentials live",
    ),
    (
        ".docker",
        "a file in .docker, where Docker registry credentials live",
    ),
    (".azure", "a file in .azure, where Azure credentials live"),
    (
        ".password-store",
        "a file in .password-store, where pass keeps passwords",
    ),
];

/// Folders that hold credentials only below a certain parent.
const CREDENTIAL_SUBDIRS: [(&str, &str, &str); 5] = [
    (
        ".config",
        "gcloud",
        "a file in .config/gcloud, where Google Cloud credentials live",
    ),
    (
        ".config",
        "gh",
        "a file in .config/gh, where the GitHub CLI keeps its token",
    ),
    (
        ".config",
        "hub",
        "a file in .config/hub, where hub keeps its GitHub token",
    ),
    (
        "share",
        "keyrings",
        "a file in a keyrings folder, where the desktop keeps passwords",
    ),
    (
        "library",
        "keychains",
        "a file in Library/Keychains, where macOS keeps passwords",
    ),
];

/// File names (lower-case) that are credentials wherever they are.
const CREDENTIAL_FILES: [(&str, &str); 27] = [
    (".netrc", "a .netrc file, which holds login passwords"),
    ("_netrc", "a _netrc file, which holds login passwords"),
    (
        ".git-credentials",
        "a .git-credentials file, which holds Git passwords and tokens",
    ),
    (
        ".pgpass",
        "a .pgpass file, which holds PostgreSQL passwords",
    ),
    (".my.cnf", "a .my.cnf file, which holds MySQL passwords"),
    (".npmrc", "an .npmrc file, which holds npm tokens"),
    (".pypirc", "a .pypirc file, which holds PyPI tokens"),
    (
        ".vault-token",
        "a .vault-token file, which holds a Vault token",
    ),
    (
        ".htpasswd",
        "an .htpasswd file, which holds password hashes",
    ),
    (
        ".envrc",
        "an .envrc file, where direnv keeps environment secrets",
    ),
    ("credentials.tfrc.json", "a Terraform credentials file"),
    ("login data", "a browser's saved passwords"),
    ("logins.json", "a browser's saved passwords"),
    ("key4.db", "a browser's password key database"),
    (
        "cookies",
        "a browser's cookies, which hold signed-in sessions",
    ),
    (
        "cookies.sqlite",
        "a browser's cookies, which hold signed-in sessions",
    ),
    (
        ".bash_history",
        "a shell history, which often holds pasted passwords and tokens",
    ),
    (
        ".zsh_history",
        "a shell history, which often holds pasted passwords and tokens",
    ),
    (
        ".sh_history",
        "a shell history, which often holds pasted passwords and tokens",
    ),
    (
        "fish_history",
        "a shell history, which often holds pasted passwords and tokens",
    ),
    (
        ".psql_history",
        "a database shell history, which often holds passwords",
    ),
    (
        ".mysql_history",
        "a database shell history, which often holds passwords",
    ),
    (MCP_CONFIG_NAMES[0], MCP_CONFIG),
    (MCP_CONFIG_NAMES[1], MCP_CONFIG),
    (MCP_CONFIG_NAMES[2], MCP_CONFIG),
    (MCP_CONFIG_NAMES[3], MCP_CONFIG),
    (MCP_CONFIG_NAMES[4], MCP_CONFIG),
];

const MCP_CONFIG: &str = "an MCP client configuration, which holds other servers' tokens";

/// MCP client configurations known by their name alone: Claude Desktop,
/// Claude Code (`~/.claude.json`, a project's `.mcp.json`), Cursor and VS
/// Code (`.cursor/mcp.json`, `.vscode/mcp.json`), Windsurf, Cline and Roo.
const MCP_CONFIG_NAMES: [&str; 5] = [
    "claude_desktop_config.json",
    ".claude.json",
    "mcp.json",
    ".mcp.json",
    "mcp_config.json",
];

/// Files that are credentials only in a certain folder.
const CREDENTIAL_FILES_IN: [(&str, &str, &str); 13] = [
    ("etc", "shadow", "the system's password hashes"),
    ("etc", "gshadow", "the system's group password hashes"),
    (
        ".cargo",
        "credentials",
        "a Cargo credentials file, which holds registry tokens",
    ),
    (
        ".cargo",
        "credentials.toml",
        "a Cargo credentials file, which holds registry tokens",
    ),
    (".claude", "settings.json", MCP_CONFIG),
    (".claude", "settings.local.json", MCP_CONFIG),
    (
        ".claude",
        ".credentials.json",
        "Claude Code's sign-in credentials",
    ),
    (".gemini", "settings.json", MCP_CONFIG),
    (".codex", "config.toml", MCP_CONFIG),
    (".codex", "auth.json", "the Codex CLI's sign-in credentials"),
    (".continue", "config.json", MCP_CONFIG),
    (".continue", "config.yaml", MCP_CONFIG),
    ("zed", "settings.json", MCP_CONFIG),
];

/// Extensions (lower-case) of files that are keys or password stores.
const CREDENTIAL_EXTENSIONS: [(&str, &str); 9] = [
    ("p12", "a PKCS #12 bundle, which holds a private key"),
    ("pfx", "a PKCS #12 bundle, which holds a private key"),
    ("kdbx", "a KeePass password database"),
    ("kdb", "a KeePass password database"),
    ("keychain", "a macOS keychain"),
    ("keychain-db", "a macOS keychain"),
    ("jks", "a Java key store"),
    ("keystore", "a key store"),
    ("ppk", "a PuTTY private key"),
];

/// Stems of SSH private key files, refused anywhere (their `.pub` halves
/// are public and allowed outside `.ssh`).
const SSH_KEY_STEMS: [&str; 5] = ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss"];

/// `.env` variants that hold examples, not secrets.
const ENV_EXAMPLES: [&str; 3] = [".env.example", ".env.sample", ".env.template"];

/// Says why a path is a file where credentials live (".ssh", ".netrc",
/// ".env", a PKCS #12 bundle, an SSH key, an MCP client configuration, …),
/// or `None` for any other path. It looks only at the path, without case
/// (macOS and Windows folders ignore it) and with `.` and `..` taken away,
/// and is meant to run on the path as given and again on the real path once
/// links are resolved. A `.pem` or `.key` file is judged by its content
/// instead: [`holds_secret`] refuses a private key block, so a certificate
/// may still be sent.
#[must_use]
pub fn is_credential_path(path: &Path) -> Option<&'static str> {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().to_lowercase()),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let name = parts.last()?;
    for (index, part) in parts.iter().enumerate() {
        if let Some((_, why)) = CREDENTIAL_DIRS.iter().find(|(dir, _)| dir == part) {
            return Some(why);
        }
        let parent = index.checked_sub(1).map(|i| parts[i].as_str());
        if let Some((_, _, why)) = CREDENTIAL_SUBDIRS
            .iter()
            .find(|(up, dir, _)| Some(*up) == parent && dir == part)
        {
            return Some(why);
        }
    }
    if let Some((_, why)) = CREDENTIAL_FILES.iter().find(|(file, _)| file == name) {
        return Some(why);
    }
    let parent = parts.len().checked_sub(2).map(|i| parts[i].as_str());
    if let Some((_, _, why)) = CREDENTIAL_FILES_IN
        .iter()
        .find(|(up, file, _)| Some(*up) == parent && file == name)
    {
        return Some(why);
    }
    if (name == ".env" || name.starts_with(".env.")) && !ENV_EXAMPLES.contains(&name.as_str()) {
        return Some("a .env file, where programs keep their secrets");
    }
    let extension = name.rsplit_once('.').map(|(_, ext)| ext);
    if SSH_KEY_STEMS.iter().any(|stem| name.starts_with(stem)) && extension != Some("pub") {
        return Some("an SSH private key");
    }
    let extension = extension?;
    CREDENTIAL_EXTENSIONS
        .iter()
        .find(|(ext, _)| *ext == extension)
        .map(|(_, why)| *why)
}

/// `MIN_TOKEN_BYTES` is the shortest token [`holds_secret`] looks for: a
/// shorter one would be found in ordinary text by chance (Mattermost's are
/// 26 characters).
pub const MIN_TOKEN_BYTES: usize = 8;

/// Says what secret `bytes` hold, or `None`: a private key block (PEM
/// `-----BEGIN … PRIVATE KEY-----`, OpenSSH, PGP `PRIVATE KEY BLOCK`, a
/// PuTTY key, or a whole file that is a DER private key), or the server's
/// own `token` anywhere in them. Text in UTF-16 is searched too. A token
/// shorter than [`MIN_TOKEN_BYTES`] is not searched for.
#[must_use]
pub fn holds_secret(bytes: &[u8], token: &str) -> Option<&'static str> {
    if let Some(found) = secret_in(bytes, token) {
        return Some(found);
    }
    let units = utf16_ascii(bytes)?;
    secret_in(&units, token)
}

fn secret_in(bytes: &[u8], token: &str) -> Option<&'static str> {
    if token.len() >= MIN_TOKEN_BYTES && memmem::find(bytes, token.as_bytes()).is_some() {
        return Some("the server's own Mattermost token");
    }
    for at in memmem::find_iter(bytes, b"-----BEGIN ") {
        let rest = &bytes[at + 11..];
        let label = &rest[..rest.len().min(64)];
        if let Some(end) = memmem::find(label, b"-----")
            && memmem::find(&label[..end], b"PRIVATE KEY").is_some()
        {
            return Some("a private key block");
        }
    }
    if memmem::find(bytes, b"PuTTY-User-Key-File-").is_some() {
        return Some("a PuTTY private key");
    }
    if is_der_private_key(bytes) {
        return Some("a private key (DER)");
    }
    None
}

/// The ASCII characters of UTF-16 text behind a byte-order mark, so that a
/// key or token saved as UTF-16 is found too.
fn utf16_ascii(bytes: &[u8]) -> Option<Vec<u8>> {
    let little = match bytes.get(..2)? {
        [0xFF, 0xFE] => true,
        [0xFE, 0xFF] => false,
        _ => return None,
    };
    Some(
        bytes[2..]
            .chunks_exact(2)
            .map(|pair| {
                let (low, high) = if little {
                    (pair[0], pair[1])
                } else {
                    (pair[1], pair[0])
                };
                if high == 0 && low.is_ascii() {
                    low
                } else {
                    b'?'
                }
            })
            .collect(),
    )
}

/// Whether the whole of `bytes` is one DER structure that begins as a
/// PKCS #8, PKCS #1 or SEC 1 private key does (a sequence whose first
/// element is a small version integer, 0 or 1). The outer length must
/// cover the file exactly, so other binaries do not match by chance.
fn is_der_private_key(bytes: &[u8]) -> bool {
    let Some((&0x30, rest)) = bytes.split_first() else {
        return false;
    };
    let Some((length, header)) = der_length(rest) else {
        return false;
    };
    let body = &rest[header..];
    if body.len() != length {
        return false;
    }
    let pkcs8_or_pkcs1 =
        body.starts_with(&[0x02, 0x01, 0x00]) && matches!(body.get(3), Some(0x30 | 0x02));
    let sec1 = body.starts_with(&[0x02, 0x01, 0x01, 0x04]);
    pkcs8_or_pkcs1 || sec1
}

/// A DER length and how many bytes it took.
fn der_length(bytes: &[u8]) -> Option<(usize, usize)> {
    let first = *bytes.first()?;
    if first < 0x80 {
        return Some((usize::from(first), 1));
    }
    let count = usize::from(first & 0x7f);
    if count == 0 || count > 4 {
        return None;
    }
    let digits = bytes.get(1..=count)?;
    let length = digits
        .iter()
        .fold(0usize, |length, &digit| (length << 8) | usize::from(digit));
    Some((length, 1 + count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_where_credentials_live_are_named_with_a_reason() {
        let refused = [
            "/home/me/.ssh/id_ed25519",
            "/home/me/.ssh/config",
            "/home/me/.SSH/known_hosts",
            "/home/me/.gnupg/pubring.kbx",
            "/home/me/.aws/credentials",
            "/home/me/.kube/config",
            "/home/me/.docker/config.json",
            "/home/me/.netrc",
            "/home/me/.git-credentials",
            "/home/me/.pgpass",
            "/srv/app/.env",
            "/srv/app/.env.production",
            "/srv/app/.ENV.local",
            "/home/me/cert.p12",
            "/home/me/cert.PFX",
            "/home/me/passwords.kdbx",
            "/backup/id_rsa",
            "/backup/id_ed25519.old",
            "/home/me/.config/Claude/claude_desktop_config.json",
            "/home/me/project/.cursor/mcp.json",
            "/home/me/project/.vscode/mcp.json",
            "/home/me/.claude.json",
            "/home/me/project/.mcp.json",
            "/home/me/.claude/settings.json",
            "/home/me/.config/gcloud/application_default_credentials.json",
            "/etc/shadow",
            "/home/me/.cargo/credentials.toml",
            "/home/me/.bash_history",
            "/home/me/docs/../.ssh/id_rsa",
        ];
        for path in refused {
            assert!(
                is_credential_path(Path::new(path)).is_some(),
                "{path} should be refused"
            );
        }
        let allowed = [
            "/srv/app/.env.example",
            "/srv/app/.env.sample",
            "/srv/app/.env.template",
            "/home/me/report.pdf",
            "/home/me/id_rsa.pub",
            "/home/me/cert.pem",
            "/home/me/notes/environment.md",
            "/home/me/settings.json",
            "/home/me/gh/readme.md",
            "/home/me/docker/compose.yaml",
            "/home/me/.ssh/../report.txt",
        ];
        for path in allowed {
            assert_eq!(is_credential_path(Path::new(path)), None, "{path}");
        }
        assert_eq!(
            is_credential_path(Path::new("/home/me/.ssh/id_ed25519")),
            Some("a file in .ssh, where SSH keys live")
        );
    }

    #[test]
    fn private_keys_and_the_token_are_found_anywhere_in_the_bytes() {
        let token = "abcdefghijklmnopqrstuvwxyz";
        let cases: [(&[u8], Option<&str>); 9] = [
            (
                b"notes\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n",
                Some("a private key block"),
            ),
            (
                b"-----BEGIN RSA PRIVATE KEY-----\n",
                Some("a private key block"),
            ),
            (
                b"x -----BEGIN PGP PRIVATE KEY BLOCK-----\n",
                Some("a private key block"),
            ),
            (
                b"-----BEGIN ENCRYPTED PRIVATE KEY-----\n",
                Some("a private key block"),
            ),
            (b"-----BEGIN CERTIFICATE-----\nMIIB\n", None),
            (b"-----BEGIN PUBLIC KEY-----\n", None),
            (
                b"config: token=abcdefghijklmnopqrstuvwxyz\n",
                Some("the server's own Mattermost token"),
            ),
            (
                b"PuTTY-User-Key-File-3: ssh-ed25519\n",
                Some("a PuTTY private key"),
            ),
            (b"just words about keys and tokens\n", None),
        ];
        for (bytes, expected) in cases {
            assert_eq!(
                holds_secret(bytes, token),
                expected,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(
            holds_secret(b"short", "short"),
            None,
            "a tiny token is not searched"
        );
    }

    #[test]
    fn a_key_in_utf16_or_der_is_found_too() {
        let mut utf16 = vec![0xFF, 0xFE];
        for unit in "-----BEGIN PRIVATE KEY-----".encode_utf16() {
            utf16.extend(unit.to_le_bytes());
        }
        assert_eq!(holds_secret(&utf16, ""), Some("a private key block"));
        // An Ed25519 PKCS #8 key: SEQUENCE { INTEGER 0, SEQUENCE { OID }, OCTET STRING }.
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
        ];
        der.extend([0x04, 0x22, 0x04, 0x20]);
        der.extend([7u8; 32]);
        assert_eq!(holds_secret(&der, ""), Some("a private key (DER)"));
        der.push(0);
        assert_eq!(
            holds_secret(&der, ""),
            None,
            "the length must cover the file"
        );
    }
}
