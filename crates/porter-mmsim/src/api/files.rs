//! Files: multipart upload with the server's field rules, file infos, and
//! downloads with the server's headers.

use axum::extract::multipart::{Field, Multipart, MultipartError, MultipartRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use bytes::{Bytes, BytesMut};
use serde_json::json;
use std::fmt::Write as _;

use super::shared::{
    ApiResult, Caller, PathParams, Query, Session, json_response, ok, require_channel_member,
    require_id,
};
use crate::error::ApiError;
use crate::model::now_millis;
use crate::state::{State as ServerState, StoredFile};

/// `FORM_VALUE_MAX_BYTES` is the most the server reads of a text field in an
/// upload (`maxMultipartFormDataBytes`, 10 KiB).
const FORM_VALUE_MAX_BYTES: u64 = 10 * 1024;

/// `DRAIN_MAX_BYTES` is how much of a refused upload's remaining body is
/// read and dropped (as the server's `maxUploadDrainBytes`), so the client
/// finishes sending and reads the error instead of a reset connection.
const DRAIN_MAX_BYTES: usize = 10 * 1024 * 1024;

/// One file part of an upload, held until the whole request is known good.
struct Part {
    name: String,
    bytes: Bytes,
}

/// The server's 400 for a request body that is not readable multipart.
fn read_error(detail: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "api.file.upload_file.read_request.app_error",
        "Unable to upload file(s). Error reading or parsing request data.",
    )
    .detail(detail)
}

/// The server's 413 for a file over `MaxFileSize`.
fn too_large(name: &str, length: usize, limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "api.file.upload_file.too_large_detailed.app_error",
        format!(
            "Unable to upload file {name}. {length} bytes exceeds the maximum allowed {limit} bytes."
        ),
    )
}

/// Maps a multipart reading failure: over the body limit is 413, anything
/// else the server's read error.
fn multipart_failure(err: &MultipartError, limit: u64) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large("(request)", 0, limit)
    } else {
        read_error(err.body_text())
    }
}

/// Reads a part whole, refusing it with `too_big(length)` as soon as it
/// holds more than `max_bytes`; `limit` (the file size limit) is what a
/// request over the body limit is refused with.
async fn read_part(
    field: &mut Field<'_>,
    limit: u64,
    max_bytes: u64,
    too_big: impl Fn(usize) -> ApiError,
) -> Result<BytesMut, ApiError> {
    let mut bytes = BytesMut::new();
    while let Some(chunk) = field
        .chunk()
        .await
        .map_err(|err| multipart_failure(&err, limit))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > max_bytes {
            return Err(too_big(bytes.len()));
        }
    }
    Ok(bytes)
}

/// Reads and drops what is left of a refused upload, up to
/// [`DRAIN_MAX_BYTES`].
async fn drain(multipart: &mut Multipart) {
    let mut budget = DRAIN_MAX_BYTES;
    while let Ok(Some(mut field)) = multipart.next_field().await {
        while let Ok(Some(chunk)) = field.chunk().await {
            budget = budget.saturating_sub(chunk.len());
            if budget == 0 {
                return;
            }
        }
    }
}

/// `POST /files`: stores the files of a multipart form and answers
/// `{file_infos, client_ids}` with 201.
///
/// The server's rules: text fields may only be `channel_id` and
/// `client_ids`, and the file parts must be named `files`; anything else is
/// a 400 naming the field. `channel_id` may come as a query parameter
/// instead (both, differing, is a 400). `client_ids`, when sent, come one
/// per file and before the files. A file over `max_file_size` is a 413. The
/// caller must be a member of the channel. Nothing is stored unless the
/// whole request is accepted.
pub(crate) async fn upload(
    caller: Caller,
    query: Query,
    multipart: Result<Multipart, MultipartRejection>,
) -> ApiResult {
    let mut multipart = multipart.map_err(|rejection| read_error(rejection.body_text()))?;
    let limit = caller.lock().config.max_file_size;
    match read_upload(&mut multipart, &query, limit).await {
        Ok(upload) => store_upload(&caller, upload),
        Err(err) => {
            drain(&mut multipart).await;
            Err(err)
        }
    }
}

/// What an accepted multipart form held.
struct Upload {
    channel_id: String,
    client_ids: Vec<String>,
    expect_client_ids: bool,
    files: Vec<Part>,
}

/// Reads the form, applying the field rules as each part arrives.
async fn read_upload(
    multipart: &mut Multipart,
    query: &Query,
    limit: u64,
) -> Result<Upload, ApiError> {
    let query_channel = query.given("channel_id").map(str::to_owned);
    let mut channel_id = query_channel.clone();
    let mut client_ids: Vec<String> = Vec::new();
    let mut expect_client_ids = true;
    let mut files: Vec<Part> = Vec::new();
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(err) => return Err(multipart_failure(&err, limit)),
        };
        let form_name = field.name().unwrap_or_default().to_owned();
        if form_name.is_empty() {
            continue;
        }
        let Some(file_name) = field.file_name().map(str::to_owned) else {
            let value = read_part(&mut field, limit, FORM_VALUE_MAX_BYTES, |_| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "api.file.upload_file.read_form_value.app_error",
                    format!("Unable to read form value for {form_name}."),
                )
            })
            .await?;
            let value = String::from_utf8_lossy(&value).into_owned();
            match form_name.as_str() {
                "channel_id" => {
                    if query_channel.as_ref().is_some_and(|q| *q != value) {
                        return Err(ApiError::new(
                            StatusCode::BAD_REQUEST,
                            "api.file.upload_file.multiple_channel_ids.app_error",
                            "Unable to upload file(s). Multiple conflicting channel_ids.",
                        ));
                    }
                    if !value.is_empty() {
                        channel_id = Some(value);
                    }
                }
                "client_ids" => {
                    if !expect_client_ids {
                        return Err(ApiError::invalid_body_param("client_ids"));
                    }
                    client_ids.push(value);
                }
                other => return Err(ApiError::invalid_body_param(other)),
            }
            continue;
        };
        if form_name != "files" {
            return Err(ApiError::invalid_body_param(&form_name));
        }
        if files.is_empty() && client_ids.is_empty() {
            expect_client_ids = false;
        }
        if expect_client_ids && files.len() >= client_ids.len() {
            return Err(ApiError::invalid_body_param("client_ids"));
        }
        let name = file_name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or_default()
            .to_owned();
        let content = read_part(&mut field, limit, limit, |length| {
            too_large(&name, length, limit)
        })
        .await?;
        files.push(Part {
            name,
            bytes: content.freeze(),
        });
    }
    if files.is_empty() {
        return Err(ApiError::invalid_body_param("files"));
    }
    if expect_client_ids && client_ids.len() != files.len() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.file.upload_file.incorrect_number_of_client_ids.app_error",
            format!(
                "Unable to upload file(s). Have {} client_ids for {} files.",
                client_ids.len(),
                files.len()
            ),
        ));
    }
    let channel_id = channel_id.ok_or_else(|| ApiError::invalid_url_param("channel_id"))?;
    Ok(Upload {
        channel_id,
        client_ids,
        expect_client_ids,
        files,
    })
}

/// Checks the channel and stores an accepted upload.
fn store_upload(caller: &Caller, upload: Upload) -> ApiResult {
    require_id(&upload.channel_id, "channel_id")?;
    let mut state = caller.lock();
    require_channel_member(&state, &caller.session, &upload.channel_id, "upload_file")?;
    let at = now_millis();
    let mut infos = Vec::new();
    for part in upload.files {
        let id = state.add_file(
            &caller.session.user_id,
            &upload.channel_id,
            &part.name,
            part.bytes,
            at,
        );
        if let Some(file) = state.file(&id) {
            infos.push(file.info.clone());
        }
    }
    let client_ids = if upload.expect_client_ids {
        upload.client_ids
    } else {
        Vec::new()
    };
    json_response(
        StatusCode::CREATED,
        &json!({ "file_infos": infos, "client_ids": client_ids }),
    )
}

/// Finds a file the session may fetch: its uploader may; others need to be
/// able to read the channel of the post it is attached to.
fn readable_file<'s>(
    state: &'s ServerState,
    session: &Session,
    file_id: &str,
) -> Result<&'s StoredFile, ApiError> {
    require_id(file_id, "file_id")?;
    let file = state.file(file_id).ok_or_else(|| {
        ApiError::not_found(
            "app.file_info.get.app_error",
            "Unable to get the file info.",
            format!("file_id={file_id}"),
        )
    })?;
    if file.info.user_id == session.user_id {
        return Ok(file);
    }
    let allowed = !file.info.post_id.is_empty()
        && state
            .post(&file.info.post_id)
            .and_then(|post| state.channel(&post.channel_id))
            .is_some_and(|channel| state.can_read(&session.user_id, channel));
    if allowed {
        Ok(file)
    } else {
        Err(ApiError::forbidden(
            &session.user_id,
            "read_channel_content",
        ))
    }
}

/// `GET /files/{file_id}/info`.
pub(crate) async fn info(caller: Caller, PathParams(file_id): PathParams<String>) -> ApiResult {
    let state = caller.lock();
    ok(&readable_file(&state, &caller.session, &file_id)?.info)
}

/// Types the server never serves as themselves (a browser would run
/// them); they go out as `text/plain`.
const UNSAFE_TYPES: [&str; 6] = [
    "application/javascript",
    "application/ecmascript",
    "text/javascript",
    "text/ecmascript",
    "application/x-javascript",
    "text/html",
];

/// Types the server lets a browser show inline unless `download=1`.
const MEDIA_TYPES: [&str; 21] = [
    "image/jpeg",
    "image/png",
    "image/bmp",
    "image/gif",
    "image/tiff",
    "image/webp",
    "video/avi",
    "video/mpeg",
    "video/mp4",
    "video/webm",
    "video/ogg",
    "video/quicktime",
    "video/x-matroska",
    "audio/mpeg",
    "audio/wav",
    "audio/ogg",
    "audio/webm",
    "audio/mp4",
    "audio/x-m4a",
    "audio/aac",
    "audio/flac",
];

/// Percent-escapes a file name as Go's `url.PathEscape` does, which the
/// server uses in `Content-Disposition`: letters, digits, `-_.~` and
/// `$&+:=@` stay; every other byte becomes `%XX`.
pub(crate) fn path_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~$&+:=@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The `Content-Disposition` the server sends: `attachment` (or `inline`
/// for media), then `filename="<escaped>"; filename*=UTF-8''<escaped>`.
pub(crate) fn content_disposition(kind: &str, name: &str) -> String {
    let escaped = path_escape(name);
    format!("{kind};filename=\"{escaped}\"; filename*=UTF-8''{escaped}")
}

/// `GET /files/{file_id}`: the bytes, with the server's headers.
pub(crate) async fn download(
    caller: Caller,
    PathParams(file_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    let (bytes, name, mime) = {
        let state = caller.lock();
        let file = readable_file(&state, &caller.session, &file_id)?;
        (
            file.bytes.clone(),
            file.info.name.clone(),
            file.info.mime_type.clone(),
        )
    };
    let content_type = if mime.is_empty() {
        "application/octet-stream".to_owned()
    } else if UNSAFE_TYPES.iter().any(|t| mime.starts_with(t)) {
        "text/plain".to_owned()
    } else {
        mime
    };
    let force = matches!(
        query.get("download"),
        Some("1" | "true" | "t" | "T" | "TRUE")
    );
    let media = MEDIA_TYPES.iter().any(|t| content_type.starts_with(t));
    let kind = if force || !media {
        "attachment"
    } else {
        "inline"
    };
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, &content_type);
    set(
        header::CONTENT_DISPOSITION,
        &content_disposition(kind, &name),
    );
    set(header::CACHE_CONTROL, "max-age=2592000, private");
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::X_FRAME_OPTIONS, "DENY");
    set(header::CONTENT_SECURITY_POLICY, "Frame-ancestors 'none'");
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_escaped_as_go_path_escape_does() {
        let cases = [
            ("report.pdf", "report.pdf"),
            ("my file (1).txt", "my%20file%20%281%29.txt"),
            ("a;b,c?d/e", "a%3Bb%2Cc%3Fd%2Fe"),
            ("x+y=z@$&:~", "x+y=z@$&:~"),
            ("naïve.txt", "na%C3%AFve.txt"),
            ("quote\".txt", "quote%22.txt"),
        ];
        for (name, want) in cases {
            assert_eq!(path_escape(name), want, "{name}");
        }
    }

    #[test]
    fn the_disposition_carries_both_filename_forms() {
        assert_eq!(
            content_disposition("attachment", "a b.txt"),
            "attachment;filename=\"a%20b.txt\"; filename*=UTF-8''a%20b.txt"
        );
    }
}
