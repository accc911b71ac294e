//! Every tool, registered once in the group that says when it is listed
//! and whether it asks; the name lists of each group are made from the
//! tools themselves.

use porter_mcp::tool::{Registry, Tool};

use crate::options::{Kind, Options, Transport};
use crate::server::MattermostServer;
use crate::tools;

/// `tools!` registers each tool once, in the group that says when it is
/// listed and whether it asks, and makes the name lists of each group from
/// the tools themselves.
macro_rules! tools {
    (
        read: [$($read:path),* $(,)?],
        local: [$($local:path),* $(,)?],
        posting: [$($posting:path),* $(,)?],
        post_changes: [$($post_change:path),* $(,)?],
        changes: [$($change:path),* $(,)?],
        own_state: [$($own:path),* $(,)?] $(,)?
    ) => {
        /// `READ_TOOLS` are the tools every server lists.
        pub const READ_TOOLS: &[&str] = &[$(<$read as Tool<MattermostServer>>::NAME),*];
        /// `LOCAL_TOOLS` are listed only over stdio, where the server runs on the
        /// person's own machine.
        pub const LOCAL_TOOLS: &[&str] = &[$(<$local as Tool<MattermostServer>>::NAME),*];
        /// `WRITE_TOOLS` are listed only when writes are allowed.
        pub const WRITE_TOOLS: &[&str] = &[
            $(<$posting as Tool<MattermostServer>>::NAME,)*
            $(<$post_change as Tool<MattermostServer>>::NAME,)*
            $(<$change as Tool<MattermostServer>>::NAME,)*
            $(<$own as Tool<MattermostServer>>::NAME,)*
        ];
        /// `UNASKED_TOOLS` are the write tools that change only the person's own
        /// state (or something gone in seconds), so they never ask, whatever the
        /// settings; every other write tool asks unless approval is left to the
        /// client.
        pub const UNASKED_TOOLS: &[&str] = &[$(<$own as Tool<MattermostServer>>::NAME),*];

        /// Every tool, each with its kind.
        pub(crate) fn registry() -> Registry<MattermostServer, Kind> {
            Registry::new()
                $(.with($read, Kind::Read))*
                $(.with($local, Kind::Local))*
                $(.with($posting, Kind::Posting))*
                $(.with($post_change, Kind::PostChange))*
                $(.with($change, Kind::Change))*
                $(.with($own, Kind::OwnState))*
        }
    };
}

tools! {
    read: [
        tools::users::GetMe, tools::users::GetUsers, tools::users::SearchUsers, tools::teams::GetUserTeams,
        tools::channels::GetUserChannels, tools::channels::GetChannelInfo, tools::channels::SearchChannels,
        tools::posts::ReadChannel, tools::threads::ReadPost, tools::posts::SearchPosts, tools::files::SearchFiles,
        tools::files::ReadFile, tools::teams::GetTeamInfo, tools::teams::ListTeamChannels,
        tools::teams::ListArchivedChannels, tools::channels::GetChannelStats,
        tools::status::GetStatus, tools::posts::ReadUnread, tools::threads::ListThreads,
        tools::posts::ListPinnedPosts, tools::posts::ListSaved, tools::posts::ListMentions,
        tools::drafts::ListDrafts, tools::status::Diagnose,
    ],
    local: [tools::files::SaveFile],
    posting: [tools::posts::CreatePost, tools::posts::Dm, tools::posts::GroupMessage],
    post_changes: [
        tools::posts::UpdatePost, tools::posts::DeletePost, tools::posts::AddReaction,
        tools::posts::RemoveReaction, tools::posts::PinPost,
    ],
    changes: [
        tools::channels::JoinChannel, tools::channels::LeaveChannel,
        tools::channels::CreateChannel, tools::channels::AddChannelMembers,
        tools::status::SetStatus, tools::drafts::DeleteDraft,
    ],
    own_state: [
        tools::status::Typing, tools::threads::FollowThread, tools::posts::SavePost,
        tools::posts::SetPostReminder, tools::drafts::SaveDraft, tools::channels::MarkChannelRead,
    ],
}

impl Options {
    /// `tool_names` are the tools a server with these options lists.
    #[must_use]
    pub fn tool_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = READ_TOOLS.to_vec();
        if self.transport == Transport::Stdio {
            names.extend(LOCAL_TOOLS);
        }
        if self.allow_writes {
            names.extend(WRITE_TOOLS);
        }
        names
    }
}
