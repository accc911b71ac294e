//! Who may do what. SKELETON: types agreed; rules and tests by helper
//! "filetool" (issue 5 brief).

use crate::config::{Grant, Role};

/// `Caller` is who is asking for a File operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// The run's own model, through the `File` tool: its profile's grants and
    /// volumes apply.
    Model {
        grants: Vec<Grant>,
        volumes: Vec<String>,
    },
    /// An API key from outside (the HTTP API or the admin MCP `file` tool).
    Key {
        name: String,
        tenant: String,
        role: Role,
        grants: Vec<Grant>,
        volumes: Vec<String>,
    },
}

/// `KeyInfo` is one configured API key, its secret resolved (`${ENV}`
/// expanded) and its profile's grants and volumes looked up.
#[derive(Clone, PartialEq)]
pub struct KeyInfo {
    pub name: String,
    /// The secret; never shown by `Debug`.
    pub secret: String,
    pub tenant: String,
    pub role: Role,
    pub grants: Vec<Grant>,
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

/// `Keys` is every configured API key.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    keys: Vec<KeyInfo>,
}

impl Keys {
    #[must_use]
    pub fn new(keys: Vec<KeyInfo>) -> Self {
        Self { keys }
    }

    /// The key whose secret is `presented` (compared in constant time), if any.
    #[must_use]
    pub fn authenticate(&self, presented: &str) -> Option<&KeyInfo> {
        let _ = presented;
        todo!()
    }

    /// The key named in an `Authorization: Bearer <key>` header value, if any.
    #[must_use]
    pub fn from_authorization(&self, header: Option<&str>) -> Option<&KeyInfo> {
        let _ = header;
        todo!()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Whether `key` may read the run owned by `owner`: its owner, an admin, or a
/// tenant operator of the run's tenant.
#[must_use]
pub fn can_read(key: &KeyInfo, owner: &porter_inbox::Owner) -> bool {
    let _ = (key, owner);
    todo!()
}

/// Whether `key` may change the run owned by `owner` (`extract`, `rm`,
/// `clear`, `keep`): its owner, an admin, or a tenant operator of its tenant.
#[must_use]
pub fn can_change(key: &KeyInfo, owner: &porter_inbox::Owner) -> bool {
    let _ = (key, owner);
    todo!()
}
