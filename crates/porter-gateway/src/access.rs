//! Who may do what: API keys, how a presented key is recognised, and which
//! keys may read or change a run.
//!
//! The rules are plain functions so that the HTTP API, the admin MCP tool
//! and the `File` tool all ask the same question the same way. Grants on
//! volumes are decided by the `File` tool itself (`crate::tools::file`), since only
//! it knows which volume a path names.

use std::fmt::Write as _;

use porter_mcp::http::{bearer_token, same_digest, secret_digest};

use crate::config::{Config, ConfigError, Expand, Grant, Role, expand, listing};

/// `Caller` is who is asking for a File operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// The run's own model, through the `File` tool: its profile's grants and
    /// volumes apply.
    Model {
        /// The profile's grants.
        grants: Vec<Grant>,
        /// The profile's volumes.
        volumes: Vec<String>,
    },
    /// An API key from outside (the HTTP API or the admin MCP `file` tool).
    Key {
        /// The key's name.
        name: String,
        /// The key's tenant: tenant volumes and `keep` targets must match it.
        tenant: String,
        /// The key's role.
        role: Role,
        /// The key's profile's grants.
        grants: Vec<Grant>,
        /// The key's profile's volumes.
        volumes: Vec<String>,
    },
}

/// `KeyInfo` is one configured API key, its secret resolved (`${ENV}`
/// expanded) and its profile's grants and volumes looked up.
#[derive(Clone, PartialEq)]
pub struct KeyInfo {
    /// The key's name, unique in the config.
    pub name: String,
    /// The secret; never shown by `Debug`.
    pub secret: String,
    /// The tenant the key belongs to.
    pub tenant: String,
    /// What the key may do with other keys' runs.
    pub role: Role,
    /// Its profile's grants (`File` alone without a profile).
    pub grants: Vec<Grant>,
    /// Its profile's volumes (none without a profile).
    pub volumes: Vec<String>,
}

impl std::fmt::Debug for KeyInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyInfo")
            .field("name", &self.name)
            .field("tenant", &self.tenant)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl KeyInfo {
    /// This key as a File caller.
    #[must_use]
    pub fn caller(&self) -> Caller {
        Caller::Key {
            name: self.name.clone(),
            tenant: self.tenant.clone(),
            role: self.role,
            grants: self.grants.clone(),
            volumes: self.volumes.clone(),
        }
    }

    /// This key as a run's owner.
    #[must_use]
    pub fn owner(&self) -> porter_inbox::Owner {
        porter_inbox::Owner {
            key_name: self.name.clone(),
            tenant: self.tenant.clone(),
        }
    }
}

impl Config {
    /// The API keys with their secrets resolved through `vars` and their
    /// profiles' grants and volumes; a key without a profile gets `File` and
    /// no volumes.
    pub fn keys(&self, vars: &dyn Fn(&str) -> Option<String>) -> Result<Keys, ConfigError> {
        let mut keys = Vec::with_capacity(self.api_keys.len());
        for (index, api_key) in self.api_keys.iter().enumerate() {
            let secret = expand(&api_key.key, vars).map_err(|e| match e {
                Expand::Unset(var) => ConfigError::MissingVar {
                    key: api_key.name.clone(),
                    var,
                },
                Expand::Unclosed => ConfigError::Invalid {
                    key: format!("api_keys[{index}].key"),
                    message: "`${` is not closed; write ${ENV_NAME}".to_owned(),
                },
            })?;
            if secret.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    key: format!("api_keys[{index}].key"),
                    message: format!(
                        "the key of {:?} is empty; give it a long random secret",
                        api_key.name
                    ),
                });
            }
            let (grants, volumes) = match &api_key.profile {
                Some(name) => {
                    let profile = self
                        .profiles
                        .get(name)
                        .ok_or_else(|| ConfigError::Invalid {
                            key: format!("api_keys[{index}].profile"),
                            message: format!(
                                "no profile {name:?}; the profiles are: {}",
                                listing(self.profiles.keys())
                            ),
                        })?;
                    (profile.grants.clone(), profile.volumes.clone())
                }
                None => (vec![Grant::File], Vec::new()),
            };
            keys.push(KeyInfo {
                name: api_key.name.clone(),
                secret,
                tenant: api_key.tenant.clone(),
                role: api_key.role,
                grants,
                volumes,
            });
        }
        for (index, key) in keys.iter().enumerate() {
            if let Some(other) = keys[..index].iter().find(|k| k.secret == key.secret) {
                return Err(ConfigError::Invalid {
                    key: format!("api_keys[{index}].key"),
                    message: format!(
                        "{:?} has the same key as {:?}; give every API key its own secret",
                        key.name, other.name
                    ),
                });
            }
        }
        Ok(Keys::new(keys))
    }
}

/// `ONE_TIME_KEY_BYTES` is how many random bytes a one-time key holds
/// (written as 64 hex digits).
const ONE_TIME_KEY_BYTES: usize = 32;

impl KeyInfo {
    /// `one_time` is a key for the local user of a gateway with no API keys
    /// configured: named `local` of tenant `local` like the runs that user
    /// opens, with `caller`'s grants and volumes, and a secret made now
    /// that lives as long as this process. It lets the person at the
    /// machine open the web page, as a notebook server's token does.
    ///
    /// # Errors
    ///
    /// When the system has no randomness to give.
    pub fn one_time(caller: &Caller) -> Result<KeyInfo, getrandom::Error> {
        let mut bytes = [0u8; ONE_TIME_KEY_BYTES];
        getrandom::fill(&mut bytes)?;
        let secret = bytes.iter().fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        });
        let (grants, volumes) = match caller {
            Caller::Model { grants, volumes }
            | Caller::Key {
                grants, volumes, ..
            } => (grants.clone(), volumes.clone()),
        };
        Ok(KeyInfo {
            name: "local".to_owned(),
            secret,
            tenant: "local".to_owned(),
            role: Role::User,
            grants,
            volumes,
        })
    }
}

/// `Keys` is every configured API key.
#[derive(Clone, Default)]
pub struct Keys {
    keys: Vec<KeyInfo>,
    /// SHA-256 of each secret, in the order of `keys`: comparing digests
    /// takes the same time whatever the secrets' lengths.
    digests: Vec<[u8; 32]>,
}

impl Keys {
    /// The keys, as [`crate::config::Config::keys`] resolves them.
    #[must_use]
    pub fn new(keys: Vec<KeyInfo>) -> Self {
        let digests = keys.iter().map(|k| secret_digest(&k.secret)).collect();
        Self { keys, digests }
    }

    /// The key whose secret is `presented` (compared in constant time), if any.
    ///
    /// Every key is compared in full, whether or not an earlier one matched,
    /// so the time taken says nothing about which bytes were right.
    #[must_use]
    pub fn authenticate(&self, presented: &str) -> Option<&KeyInfo> {
        if presented.is_empty() {
            return None;
        }
        let presented = secret_digest(presented);
        let mut found = None;
        for (key, known) in self.keys.iter().zip(&self.digests) {
            if same_digest(&presented, known) {
                found = Some(key);
            }
        }
        found
    }

    /// The key named in an `Authorization: Bearer <key>` header value, if any.
    /// The scheme is case-insensitive (`bearer`, `BEARER`), as HTTP says.
    #[must_use]
    pub fn from_authorization(&self, header: Option<&str>) -> Option<&KeyInfo> {
        self.authenticate(bearer_token(header)?)
    }

    /// Whether no key is configured (the HTTP API then refuses every call).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every key, in configuration order.
    #[must_use]
    pub fn all(&self) -> &[KeyInfo] {
        &self.keys
    }
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.keys).finish()
    }
}

/// Whether `key` may read the run owned by `owner`: its owner, an admin, or a
/// tenant operator of the run's tenant.
#[must_use]
pub fn can_read(key: &KeyInfo, owner: &porter_inbox::Owner) -> bool {
    may_act(&key.name, &key.tenant, key.role, owner)
}

/// Whether `key` may change the run owned by `owner` (`extract`, `rm`,
/// `clear`, `keep`): its owner, an admin, or a tenant operator of its tenant.
///
/// Today the same keys as [`can_read`]; it stays a function of its own so
/// that the two rules can part without every caller being revisited.
#[must_use]
pub fn can_change(key: &KeyInfo, owner: &porter_inbox::Owner) -> bool {
    may_act(&key.name, &key.tenant, key.role, owner)
}

/// The rule behind [`can_read`] and [`can_change`], on a key's parts, for
/// callers that hold a [`Caller::Key`] rather than a [`KeyInfo`].
pub(crate) fn may_act(name: &str, tenant: &str, role: Role, owner: &porter_inbox::Owner) -> bool {
    match role {
        Role::Admin => true,
        Role::TenantOperator => tenant == owner.tenant,
        Role::User => name == owner.key_name && tenant == owner.tenant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porter_inbox::Owner;

    fn key(name: &str, secret: &str, tenant: &str, role: Role) -> KeyInfo {
        KeyInfo {
            name: name.to_owned(),
            secret: secret.to_owned(),
            tenant: tenant.to_owned(),
            role,
            grants: vec![Grant::File],
            volumes: Vec::new(),
        }
    }

    fn owner(name: &str, tenant: &str) -> Owner {
        Owner {
            key_name: name.to_owned(),
            tenant: tenant.to_owned(),
        }
    }

    fn keys() -> Keys {
        Keys::new(vec![
            key("alice", "alice-secret-0001", "acme", Role::User),
            key("ops", "ops-secret-0002", "acme", Role::TenantOperator),
            key("root", "root-secret-0003", "hq", Role::Admin),
        ])
    }

    #[test]
    fn a_presented_key_finds_its_own_entry_and_nothing_else() {
        let keys = keys();
        let cases: &[(&str, Option<&str>)] = &[
            ("alice-secret-0001", Some("alice")),
            ("ops-secret-0002", Some("ops")),
            ("root-secret-0003", Some("root")),
            ("alice-secret-000", None),
            ("alice-secret-00011", None),
            ("ALICE-SECRET-0001", None),
            (" alice-secret-0001", None),
            ("", None),
        ];
        for (presented, expected) in cases {
            assert_eq!(
                keys.authenticate(presented).map(|k| k.name.as_str()),
                *expected,
                "{presented:?}"
            );
        }
    }

    #[test]
    fn a_bearer_header_is_parsed_whatever_the_scheme_case() {
        let keys = keys();
        let cases: &[(Option<&str>, Option<&str>)] = &[
            (Some("Bearer alice-secret-0001"), Some("alice")),
            (Some("bearer alice-secret-0001"), Some("alice")),
            (Some("BEARER ops-secret-0002"), Some("ops")),
            (Some("  Bearer   root-secret-0003  "), Some("root")),
            (Some("Basic alice-secret-0001"), None),
            (Some("Bearer"), None),
            (Some("Bearer "), None),
            (Some("alice-secret-0001"), None),
            (Some("Bearer wrong"), None),
            (None, None),
        ];
        for (header, expected) in cases {
            assert_eq!(
                keys.from_authorization(*header).map(|k| k.name.as_str()),
                *expected,
                "{header:?}"
            );
        }
    }

    #[test]
    fn a_one_time_key_reads_the_local_users_runs_and_no_one_elses() {
        let caller = Caller::Model {
            grants: vec![Grant::File, Grant::Http],
            volumes: vec!["work".to_owned()],
        };
        let key = KeyInfo::one_time(&caller).expect("randomness");
        let again = KeyInfo::one_time(&caller).expect("randomness");
        assert_ne!(key.secret, again.secret, "each process gets its own");
        assert_eq!(key.secret.len(), 64);
        assert!(can_read(&key, &owner("local", "local")));
        assert!(!can_read(&key, &owner("alice", "local")));
        assert!(!can_read(&key, &owner("local", "acme")));
        assert_eq!(
            (key.grants.clone(), key.volumes.clone()),
            (vec![Grant::File, Grant::Http], vec!["work".to_owned()])
        );
        let keys = Keys::new(vec![key.clone()]);
        assert_eq!(
            keys.authenticate(&key.secret).map(|k| k.name.as_str()),
            Some("local")
        );
    }

    #[test]
    fn a_key_info_never_shows_its_secret() {
        let shown = format!(
            "{:?}",
            key("alice", "alice-secret-0001", "acme", Role::User)
        );
        assert!(!shown.contains("alice-secret-0001"), "{shown}");
        assert!(shown.contains("alice"));
    }

    #[test]
    fn owners_admins_and_operators_of_the_tenant_read_and_change_a_run() {
        let alice = key("alice", "a", "acme", Role::User);
        let bob = key("bob", "b", "acme", Role::User);
        let alice_elsewhere = key("alice", "c", "other", Role::User);
        let operator = key("ops", "d", "acme", Role::TenantOperator);
        let other_operator = key("ops2", "e", "other", Role::TenantOperator);
        let admin = key("root", "f", "hq", Role::Admin);
        let run = owner("alice", "acme");
        let cases: &[(&KeyInfo, bool)] = &[
            (&alice, true),
            (&bob, false),
            (&alice_elsewhere, false),
            (&operator, true),
            (&other_operator, false),
            (&admin, true),
        ];
        for (key, allowed) in cases {
            assert_eq!(can_read(key, &run), *allowed, "read by {}", key.name);
            assert_eq!(can_change(key, &run), *allowed, "change by {}", key.name);
        }
    }
}
