//! The client's calls for files: their facts, a post's files, capped
//! downloads, multipart uploads, and a file search.

use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, HeaderValue};

use crate::client::{
    Ask, Client, check_upload_name, disposition_file_name, header_text, new_id, order_uploads,
};
use crate::error::{Error, Target, Thing};
use crate::model::{Download, FileInfo, FileInfoList, Search, Upload, UploadFile};

impl Client {
    /// `file_info` is what the server says about a file.
    pub async fn file_info(&self, file_id: &str) -> Result<FileInfo, Error> {
        let ask = Ask::new("read", Target::id(Thing::File, file_id));
        self.get(&["files", file_id, "info"], &[], &ask).await
    }

    /// `post_file_infos` are the infos of a post's files.
    pub async fn post_file_infos(&self, post_id: &str) -> Result<Vec<FileInfo>, Error> {
        let ask = Ask::new("read the files of", Target::id(Thing::Post, post_id));
        self.get(&["posts", post_id, "files", "info"], &[], &ask)
            .await
    }

    /// `download` fetches a file whose info is known. A file whose info
    /// already claims more than `cap_bytes` is refused without a request;
    /// otherwise it is [`Client::download_file`], because the claim may be
    /// wrong.
    pub async fn download(&self, info: &FileInfo, cap_bytes: u64) -> Result<Download, Error> {
        if info.size > cap_bytes {
            return Err(Error::TooLarge {
                target: Target::id(Thing::File, &info.id),
                cap: cap_bytes,
                size: Some(info.size),
                received: 0,
            });
        }
        self.download_file(&info.id, cap_bytes).await
    }

    /// `download_file` fetches a file's bytes, never more than `cap_bytes`:
    /// a `Content-Length` over the cap stops before the body is read, and a
    /// body that runs past the cap is cut off there (at most one chunk more
    /// is read). Either way the answer is [`Error::TooLarge`].
    pub async fn download_file(&self, file_id: &str, cap_bytes: u64) -> Result<Download, Error> {
        let ask = Ask::new("download", Target::id(Thing::File, file_id));
        let url = self.api_url(&["files", file_id]);
        let response = self.send(&ask, || self.http.get(url.clone())).await?;
        let content_type = header_text(&response, CONTENT_TYPE);
        let file_name = header_text(&response, CONTENT_DISPOSITION)
            .as_deref()
            .and_then(disposition_file_name);
        let bytes = self.read_capped(response, cap_bytes, &ask.target).await?;
        Ok(Download {
            bytes,
            content_type,
            file_name,
        })
    }

    /// `upload_files` uploads files to a channel, ready to be attached to a
    /// post there, and answers their infos in the order given. The form
    /// carries exactly `channel_id`, then one `client_ids` per file, then one
    /// `files` part per file, as Mattermost's web app sends them. When the
    /// server refuses the upload as too large, the client asks for its
    /// `MaxFileSize` so the error can name the limit.
    pub async fn upload_files(
        &self,
        channel_id: &str,
        files: &[UploadFile],
    ) -> Result<Vec<FileInfo>, Error> {
        for file in files {
            check_upload_name(&file.name)?;
            if !file.content_type.is_empty() && file.content_type.parse::<HeaderValue>().is_err() {
                return Err(Error::BadUpload {
                    name: file.name.clone(),
                    reason: "its content type has characters a header cannot carry",
                });
            }
        }
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        let target =
            Target::several(Thing::File, &names).within(format!("for channel {channel_id:?}"));
        let ask = Ask::new("upload", target);
        let client_ids: Vec<String> = files.iter().map(|_| new_id()).collect();
        let url = self.api_url(&["files"]);
        let form = || {
            let mut form =
                reqwest::multipart::Form::new().text("channel_id", channel_id.to_owned());
            for id in &client_ids {
                form = form.text("client_ids", id.clone());
            }
            for file in files {
                let content_type = if file.content_type.is_empty() {
                    "application/octet-stream"
                } else {
                    file.content_type.as_str()
                };
                let mut part = reqwest::multipart::Part::stream_with_length(
                    file.bytes.clone(),
                    file.bytes.len() as u64,
                )
                .file_name(file.name.clone());
                let mut headers = reqwest::header::HeaderMap::new();
                if let Ok(value) = HeaderValue::from_str(content_type) {
                    headers.insert(CONTENT_TYPE, value);
                }
                part = part.headers(headers);
                form = form.part("files", part);
            }
            self.http.post(url.clone()).multipart(form)
        };
        let response = match self.send(&ask, form).await {
            Err(Error::RejectedTooLarge {
                target,
                limit: None,
                api,
            }) => {
                let limit = self
                    .client_config()
                    .await
                    .ok()
                    .and_then(|c| c.max_file_size);
                return Err(Error::RejectedTooLarge { target, limit, api });
            }
            other => other?,
        };
        let upload: Upload = self.read_json(response, &ask.target).await?;
        order_uploads(upload, &client_ids, &ask.target)
    }

    /// `search_files` searches a team's files by name and content.
    pub async fn search_files(
        &self,
        team_id: &str,
        search: &Search,
    ) -> Result<FileInfoList, Error> {
        let ask = Ask::new("search the files of", Target::id(Thing::Team, team_id));
        self.post_json(&["teams", team_id, "files", "search"], search, &ask)
            .await
    }
}
