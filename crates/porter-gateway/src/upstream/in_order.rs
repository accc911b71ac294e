//! An upstream's notifications passed on in the order they came.
//!
//! rmcp hands every notification it reads to the handler on a task of its
//! own, so two log messages read one after the other can reach the client
//! the other way round, the more so when the first carries a file to keep.
//! [`InOrder`] wraps an upstream's transport and gives each notification a
//! [`Ticket`] as it is read (reading is sequential); a handler waits for
//! its [`Sequencer::turn`] before it passes its notification on. A ticket
//! is given back when it is dropped, so a notification rmcp handles itself
//! or a handler that returns early never holds the line.
//!
//! The answer to a request is held back the same way: [`Sequencer::settled`]
//! waits until every notification read before it has been passed on, so a
//! client sees a call's logs and progress before its result.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Notify;

/// `LONGEST_WAIT` bounds how long one notification (or an answer) waits for
/// those before it: a client that stopped reading must not stall the
/// upstream's other messages for ever.
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// The tickets of one connection: given out in reading order, each given
/// back once its notification was passed on.
#[derive(Debug, Default)]
pub(super) struct Sequencer {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// The number the next ticket gets.
    next: u64,
    /// The tickets given out and not yet given back.
    held: BTreeSet<u64>,
}

/// A notification's place in its connection's order. Clones share the
/// place; it is given back when the last one is dropped.
#[derive(Clone, Debug)]
pub(super) struct Ticket(Arc<Place>);

#[derive(Debug)]
struct Place {
    number: u64,
    sequencer: Arc<Sequencer>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.sequencer.state().held.remove(&self.number);
        self.sequencer.changed.notify_waiters();
    }
}

impl Sequencer {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state is a counter and a set, sound even if a holder panicked.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn issue(self: &Arc<Self>) -> Ticket {
        let mut state = self.state();
        let number = state.next;
        state.next += 1;
        state.held.insert(number);
        Ticket(Arc::new(Place {
            number,
            sequencer: Arc::clone(self),
        }))
    }

    /// The number the next ticket will get: every ticket below it belongs
    /// to a notification already read.
    pub(super) fn mark(&self) -> u64 {
        self.state().next
    }

    /// Waits until every ticket below `number` has been given back (or
    /// `limit` has passed, which is logged).
    async fn clear_below(&self, number: u64, limit: Duration) {
        let waited = tokio::time::timeout(limit, async {
            loop {
                let changed = self.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if self
                    .state()
                    .held
                    .first()
                    .is_none_or(|first| *first >= number)
                {
                    return;
                }
                changed.await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::warn!(
                "an upstream message waited {} ms for the ones before it and is passed on out of order",
                limit.as_millis()
            );
        }
    }

    /// Waits until every notification read before `mark` (a
    /// [`Sequencer::mark`]) has been passed on.
    pub(super) async fn settled(&self, mark: u64) {
        self.clear_below(mark, LONGEST_WAIT).await;
    }
}

impl Ticket {
    /// The ticket rmcp carried from the transport to a notification's
    /// handler (in its context's extensions), if it has one.
    pub(super) fn take(extensions: &mut rmcp::model::Extensions) -> Option<Self> {
        extensions.remove::<Self>()
    }
}

/// Waits until `ticket` (if there is one) is the oldest ticket still held:
/// every notification read before it has been passed on.
pub(super) async fn turn(ticket: Option<&Ticket>) {
    if let Some(Ticket(place)) = ticket {
        place
            .sequencer
            .clear_below(place.number, LONGEST_WAIT)
            .await;
    }
}

/// An upstream transport whose notifications get their tickets as they are
/// read.
pub(super) struct InOrder<T> {
    inner: T,
    sequencer: Arc<Sequencer>,
}

impl<T> InOrder<T> {
    pub(super) fn new(inner: T, sequencer: Arc<Sequencer>) -> Self {
        Self { inner, sequencer }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &mut message {
            let ticket = self.sequencer.issue();
            notification.notification.extensions_mut().insert(ticket);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_later_ticket_waits_for_every_earlier_one_to_be_given_back() {
        let sequencer = Arc::new(Sequencer::default());
        let first = sequencer.issue();
        let second = sequencer.issue();
        let third = sequencer.issue();
        let waiting = tokio::spawn(async move {
            turn(Some(&third)).await;
            third
        });
        tokio::task::yield_now().await;
        drop(second);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !waiting.is_finished(),
            "the third ticket went before the first"
        );
        drop(first);
        let third = tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the third ticket's turn came once the first two were given back")
            .expect("the waiting task did not panic");
        assert_eq!(third.0.number, 2);
    }

    #[tokio::test]
    async fn settling_waits_only_for_what_was_read_before_the_mark() {
        let sequencer = Arc::new(Sequencer::default());
        let before = sequencer.issue();
        let mark = sequencer.mark();
        let _after = sequencer.issue();
        let settling = {
            let sequencer = Arc::clone(&sequencer);
            tokio::spawn(async move { sequencer.settled(mark).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !settling.is_finished(),
            "settled before the earlier notification"
        );
        drop(before);
        tokio::time::timeout(Duration::from_secs(1), settling)
            .await
            .expect("settled although a later ticket is still held")
            .expect("the settling task did not panic");
    }

    #[tokio::test]
    async fn a_ticket_never_given_back_holds_the_line_only_until_the_limit() {
        let sequencer = Arc::new(Sequencer::default());
        let _stuck = sequencer.issue();
        let later = sequencer.issue();
        let limit = Duration::from_millis(50);
        let started = std::time::Instant::now();
        tokio::time::timeout(
            Duration::from_secs(5),
            sequencer.clear_below(later.0.number, limit),
        )
        .await
        .expect("the wait ended at its limit");
        assert!(
            started.elapsed() >= limit,
            "the wait ended before its limit"
        );
    }
}
