//! Which roots a caller may look into or keep into.
//!
//! The inbox needs the `File` grant; a volume needs `Read` to look and
//! `Write` to keep into, and must be in the caller's own list. A volume that
//! belongs to a tenant serves only that tenant's runs and keys; a read-only
//! volume is never written; a key from outside keeps only into a read-write
//! volume of its own tenant. A volume the caller may not use is answered
//! like one that does not exist, so names of other tenants' volumes do not
//! leak.
//!
//! [`resolve`] is the one door to a volume: every tool that takes a
//! `volume:<name>:<path>` (`File`, its `extract`, `import`, `download` and
//! `upload`, and `Git`) parses and checks it there, so that none can forget
//! the tenant, the list or the mode.

use std::collections::BTreeMap;

use porter_inbox::Owner;
use porter_mcp::ToolError;

use super::reference::{Place, Reference};
use crate::access::Caller;
use crate::config::{Grant, INBOX_VOLUME, Volume, VolumeMode};

/// `Need` is what the caller wants to do with a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// `stat`, `ls`, `read`.
    Look,
    /// `keep` into it.
    Keep,
    /// `rm`, `clear`, and `keep` out of it (the inbox only).
    Change,
}

/// The caller's grants and volume list.
fn grants_of(caller: &Caller) -> (&[Grant], &[String]) {
    match caller {
        Caller::Model { grants, volumes }
        | Caller::Key {
            grants, volumes, ..
        } => (grants, volumes),
    }
}

/// The tenant a tenant volume must match: the key's own, or for the run's
/// model the tenant of the run's owner.
fn tenant_of<'a>(caller: &'a Caller, owner: &'a Owner) -> &'a str {
    match caller {
        Caller::Model { .. } => &owner.tenant,
        Caller::Key { tenant, .. } => tenant,
    }
}

/// Whether `caller` may use `volume` (named `name`) for `need`.
fn may_use(caller: &Caller, owner: &Owner, name: &str, volume: &Volume, need: Need) -> bool {
    let (grants, listed) = grants_of(caller);
    if !listed.iter().any(|v| v == name) {
        return false;
    }
    let tenant = tenant_of(caller, owner);
    if volume.tenant.as_deref().is_some_and(|t| t != tenant) {
        return false;
    }
    match need {
        Need::Look => grants.contains(&Grant::Read),
        Need::Keep => {
            let outsider_ok = match caller {
                Caller::Model { .. } => true,
                Caller::Key { tenant, .. } => volume.tenant.as_deref() == Some(tenant.as_str()),
            };
            grants.contains(&Grant::Write) && volume.mode == VolumeMode::Rw && outsider_ok
        }
        Need::Change => false,
    }
}

/// The volumes `caller` may use for `need`, for messages: `inbox` first when
/// the caller has `File`, then each volume with its mode.
pub(crate) fn usable(
    caller: &Caller,
    owner: &Owner,
    volumes: &BTreeMap<String, Volume>,
    need: Need,
) -> Vec<String> {
    let (grants, _) = grants_of(caller);
    let mut names = Vec::new();
    if grants.contains(&Grant::File) && need == Need::Look {
        names.push(INBOX_VOLUME.to_owned());
    }
    for (name, volume) in volumes {
        if may_use(caller, owner, name, volume, need) {
            let mode = match volume.mode {
                VolumeMode::Ro => "read-only",
                VolumeMode::Rw => "read-write",
            };
            names.push(format!("{name} ({mode})"));
        }
    }
    names
}

fn listing(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Parses `text` (`volume:<name>:<path>`, or a bare path in the inbox) and
/// checks that `caller`, in the run owned by `owner`, may `need` its root:
/// the reference and the volume's config (none for the inbox), or the
/// sentence to answer. A path that cannot stay beneath its root is refused
/// by the parse; a volume of another tenant or off the caller's list is
/// answered exactly like one that does not exist.
pub(crate) fn resolve<'v>(
    caller: &Caller,
    owner: &Owner,
    volumes: &'v BTreeMap<String, Volume>,
    text: &str,
    need: Need,
) -> Result<(Reference, Option<&'v Volume>), ToolError> {
    let reference = Reference::parse(text)?;
    let volume = check(caller, owner, volumes, &reference.place, need)?;
    Ok((reference, volume))
}

/// Checks that `caller` may `need` the root `place`; the volume's config on
/// success (none for the inbox), or a sentence saying what was refused and
/// what may be used instead.
pub(crate) fn check<'v>(
    caller: &Caller,
    owner: &Owner,
    volumes: &'v BTreeMap<String, Volume>,
    place: &Place,
    need: Need,
) -> Result<Option<&'v Volume>, ToolError> {
    let (grants, _) = grants_of(caller);
    let name = match place {
        Place::Inbox => {
            if need == Need::Keep {
                return Err(ToolError::tool(
                    "keep copies a file out of the inbox into a durable volume; name a volume in `to`, e.g. volume:<name>:<path>",
                ));
            }
            if grants.contains(&Grant::File) {
                return Ok(None);
            }
            return Err(ToolError::tool(
                "the inbox needs the File grant, which your profile does not give; ask the operator to add File to it",
            ));
        }
        Place::Volume(name) => name,
    };
    if need == Need::Change {
        return Err(ToolError::tool(format!(
            "rm and clear work on the inbox only; volume {name} is not changed by porter"
        )));
    }
    let Some(volume) = volumes.get(name).filter(|v| {
        may_use(caller, owner, name, v, Need::Look) || may_use(caller, owner, name, v, Need::Keep)
    }) else {
        let known = usable(caller, owner, volumes, Need::Look);
        return Err(ToolError::tool(format!(
            "there is no volume {name:?} you may use; the volumes you may use are: {}",
            listing(&known)
        )));
    };
    if may_use(caller, owner, name, volume, need) {
        return Ok(Some(volume));
    }
    let why = match need {
        Need::Look => format!(
            "looking into volume {name} needs the Read grant, which your profile does not give"
        ),
        Need::Keep if volume.mode == VolumeMode::Ro => format!("volume {name} is read-only"),
        Need::Keep if !grants.contains(&Grant::Write) => {
            format!(
                "keeping into volume {name} needs the Write grant, which your profile does not give"
            )
        }
        Need::Keep => match caller {
            Caller::Key { tenant, .. } => format!(
                "from outside, keep lands only in a read-write volume of your own tenant ({tenant}), and volume {name} is not one"
            ),
            Caller::Model { .. } => format!("volume {name} cannot be kept into"),
        },
        Need::Change => format!("volume {name} cannot be changed"),
    };
    let instead = usable(caller, owner, volumes, need);
    Err(ToolError::tool(format!(
        "{why}; the volumes you may {} are: {}",
        if need == Need::Keep {
            "keep into"
        } else {
            "look into"
        },
        listing(&instead)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Role;
    use std::path::PathBuf;

    fn volumes() -> BTreeMap<String, Volume> {
        let volume = |mode, tenant: Option<&str>| Volume {
            path: PathBuf::from("/srv"),
            mode,
            tenant: tenant.map(str::to_owned),
            allow_hard_links: false,
        };
        BTreeMap::from([
            ("shared".to_owned(), volume(VolumeMode::Ro, None)),
            ("common".to_owned(), volume(VolumeMode::Rw, None)),
            ("acme".to_owned(), volume(VolumeMode::Rw, Some("acme"))),
            ("other".to_owned(), volume(VolumeMode::Rw, Some("other"))),
        ])
    }

    fn all_volumes() -> Vec<String> {
        ["shared", "common", "acme", "other"]
            .map(str::to_owned)
            .to_vec()
    }

    fn model(grants: &[Grant]) -> Caller {
        Caller::Model {
            grants: grants.to_vec(),
            volumes: all_volumes(),
        }
    }

    fn key(grants: &[Grant], tenant: &str) -> Caller {
        Caller::Key {
            name: "k".to_owned(),
            tenant: tenant.to_owned(),
            role: Role::Admin,
            grants: grants.to_vec(),
            volumes: all_volumes(),
        }
    }

    fn acme_run() -> Owner {
        Owner {
            key_name: "alice".to_owned(),
            tenant: "acme".to_owned(),
        }
    }

    #[test]
    #[allow(clippy::too_many_lines, reason = "a table of cases")]
    fn grants_decide_who_looks_and_keeps_where() {
        use Grant::{File, Read, Write};
        let all = [File, Read, Write];
        let vol = |n: &str| Place::Volume(n.to_owned());
        let cases: Vec<(&str, Caller, Place, Need, bool)> = vec![
            (
                "inbox with File",
                model(&[File]),
                Place::Inbox,
                Need::Look,
                true,
            ),
            (
                "inbox without File",
                model(&[Read, Write]),
                Place::Inbox,
                Need::Look,
                false,
            ),
            (
                "rm in the inbox",
                model(&[File]),
                Place::Inbox,
                Need::Change,
                true,
            ),
            (
                "keep into the inbox",
                model(&all),
                Place::Inbox,
                Need::Keep,
                false,
            ),
            (
                "look with Read",
                model(&[Read]),
                vol("shared"),
                Need::Look,
                true,
            ),
            (
                "look without Read",
                model(&[File, Write]),
                vol("shared"),
                Need::Look,
                false,
            ),
            (
                "keep into ro",
                model(&all),
                vol("shared"),
                Need::Keep,
                false,
            ),
            ("keep into rw", model(&all), vol("common"), Need::Keep, true),
            (
                "keep without Write",
                model(&[File, Read]),
                vol("common"),
                Need::Keep,
                false,
            ),
            (
                "rm in a volume",
                model(&all),
                vol("common"),
                Need::Change,
                false,
            ),
            (
                "model, own tenant",
                model(&all),
                vol("acme"),
                Need::Keep,
                true,
            ),
            (
                "model, other tenant",
                model(&all),
                vol("other"),
                Need::Look,
                false,
            ),
            (
                "unknown volume",
                model(&all),
                vol("nope"),
                Need::Look,
                false,
            ),
            (
                "key looks into a shared volume",
                key(&all, "acme"),
                vol("shared"),
                Need::Look,
                true,
            ),
            (
                "key keeps into its tenant",
                key(&all, "acme"),
                vol("acme"),
                Need::Keep,
                true,
            ),
            (
                "key keeps into a tenantless volume",
                key(&all, "acme"),
                vol("common"),
                Need::Keep,
                false,
            ),
            (
                "key of another tenant",
                key(&all, "other"),
                vol("acme"),
                Need::Look,
                false,
            ),
            (
                "key keeps into its own tenant's volume",
                key(&all, "other"),
                vol("other"),
                Need::Keep,
                true,
            ),
        ];
        let volumes = volumes();
        for (what, caller, place, need, allowed) in cases {
            let result = check(&caller, &acme_run(), &volumes, &place, need);
            assert_eq!(result.is_ok(), allowed, "{what}: {result:?}");
        }
    }

    #[test]
    fn a_volume_not_in_the_callers_list_is_answered_like_a_missing_one() {
        let caller = Caller::Model {
            grants: vec![Grant::File, Grant::Read],
            volumes: vec!["shared".to_owned()],
        };
        let volumes = volumes();
        let unlisted = check(
            &caller,
            &acme_run(),
            &volumes,
            &Place::Volume("acme".into()),
            Need::Look,
        )
        .expect_err("not listed")
        .to_string();
        let missing = check(
            &caller,
            &acme_run(),
            &volumes,
            &Place::Volume("zzz".into()),
            Need::Look,
        )
        .expect_err("missing")
        .to_string();
        assert_eq!(
            unlisted.replace("\"acme\"", "X"),
            missing.replace("\"zzz\"", "X")
        );
        assert!(unlisted.contains("inbox, shared (read-only)"), "{unlisted}");
    }

    #[test]
    fn a_refused_keep_names_where_keeping_is_possible() {
        use Grant::{File, Read, Write};
        let volumes = volumes();
        let error = check(
            &model(&[File, Read, Write]),
            &acme_run(),
            &volumes,
            &Place::Volume("shared".into()),
            Need::Keep,
        )
        .expect_err("ro")
        .to_string();
        assert_eq!(
            error,
            "volume shared is read-only; the volumes you may keep into are: acme (read-write), common (read-write)"
        );
    }
}
