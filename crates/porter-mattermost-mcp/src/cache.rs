//! A bounded cache of recently read files, by file id, so that paging
//! through a large file downloads, decodes and indexes it once.
//!
//! Mattermost files never change once uploaded (an edit uploads a new file
//! with a new id), so an entry is never stale; it only has to fit. The cache
//! holds at most `cap_bytes` in all and drops the least recently used files
//! first; a file bigger than the whole cap is not kept.

use std::collections::HashMap;

use std::sync::Arc;

use bytes::Bytes;

/// `Held` is anything the cache can keep: it says how much memory it holds.
pub trait Held: Clone {
    /// Bytes held, counted against the cache's cap.
    fn held_bytes(&self) -> u64;
}

impl Held for Bytes {
    fn held_bytes(&self) -> u64 {
        self.len() as u64
    }
}

impl Held for Arc<porter_fileview::Prepared> {
    fn held_bytes(&self) -> u64 {
        porter_fileview::Prepared::held_bytes(self)
    }
}

/// `FILE_CACHE_BYTES` is the default most bytes kept (256 MiB): four files
/// at the 64 MiB read cap.
pub const FILE_CACHE_BYTES: u64 = 256 * 1024 * 1024;

/// `FileCache` maps file ids to what was read of them (their prepared
/// view), least recently used out first.
#[derive(Debug)]
pub struct FileCache<V> {
    cap_bytes: u64,
    total_bytes: u64,
    tick: u64,
    entries: HashMap<String, Entry<V>>,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    size: u64,
    used: u64,
}

impl<V: Held> FileCache<V> {
    /// `new` is an empty cache holding at most `cap_bytes` (0 keeps nothing).
    #[must_use]
    pub fn new(cap_bytes: u64) -> FileCache<V> {
        FileCache {
            cap_bytes,
            total_bytes: 0,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    /// `get` answers what is kept of a file and marks it recently used.
    pub fn get(&mut self, file_id: &str) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(file_id).map(|entry| {
            entry.used = tick;
            entry.value.clone()
        })
    }

    /// `put` keeps what was read of a file, dropping the least recently
    /// used files until it fits. Anything bigger than the cap is not kept.
    pub fn put(&mut self, file_id: &str, value: V) {
        let size = value.held_bytes();
        if size > self.cap_bytes {
            return;
        }
        if let Some(old) = self.entries.remove(file_id) {
            self.total_bytes -= old.size;
        }
        while self.total_bytes + size > self.cap_bytes {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            if let Some(gone) = self.entries.remove(&oldest) {
                self.total_bytes -= gone.size;
            }
        }
        self.tick += 1;
        self.total_bytes += size;
        self.entries.insert(
            file_id.to_owned(),
            Entry {
                value,
                size,
                used: self.tick,
            },
        );
    }

    /// `total_bytes` is how many bytes the cache holds now.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// `len` is how many files the cache holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `is_empty` is true when nothing is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    #[test]
    fn the_cache_never_holds_more_than_its_cap() {
        let mut cache = FileCache::<Bytes>::new(100);
        for i in 0..50 {
            cache.put(&format!("f{i}"), bytes(7 + i % 30));
            assert!(cache.total_bytes() <= 100, "{}", cache.total_bytes());
        }
    }

    #[test]
    fn the_least_recently_used_file_goes_first() {
        let mut cache = FileCache::<Bytes>::new(100);
        cache.put("a", bytes(40));
        cache.put("b", bytes(40));
        assert!(cache.get("a").is_some());
        cache.put("c", bytes(40));
        assert!(cache.get("a").is_some(), "a was used after b");
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert!(cache.get("c").is_some());
        assert_eq!(cache.total_bytes(), 80);
    }

    #[test]
    fn a_file_bigger_than_the_cap_is_not_kept_and_evicts_nothing() {
        let mut cache = FileCache::<Bytes>::new(100);
        cache.put("a", bytes(60));
        cache.put("huge", bytes(101));
        assert!(cache.get("huge").is_none());
        assert!(cache.get("a").is_some());
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn putting_a_file_again_replaces_it() {
        let mut cache = FileCache::<Bytes>::new(100);
        cache.put("a", bytes(60));
        cache.put("a", bytes(30));
        assert_eq!(cache.total_bytes(), 30);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_cap_of_zero_keeps_nothing() {
        let mut cache = FileCache::<Bytes>::new(0);
        cache.put("a", bytes(1));
        assert!(cache.is_empty());
        cache.put("empty", Bytes::new());
        assert_eq!(cache.total_bytes(), 0);
    }
}
