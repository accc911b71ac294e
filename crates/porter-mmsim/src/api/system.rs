//! `system/ping` and `config/client`, which clients call before logging in.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::json;

use super::shared::{ApiResult, Query, ok};
use crate::error::ApiError;
use crate::sim::Sim;

/// `GET /system/ping`: the server is up (no login needed).
pub(crate) async fn ping(query: Query) -> ApiResult {
    let mut answer = json!({
        "status": "OK",
        "ActiveSearchBackend": "database",
        "AndroidLatestVersion": "",
        "AndroidMinVersion": "",
        "IosLatestVersion": "",
        "IosMinVersion": "",
    });
    if query.flag("get_server_status")
        && let Some(object) = answer.as_object_mut()
    {
        object.insert("database_status".to_owned(), json!("OK"));
        object.insert("filestore_status".to_owned(), json!("OK"));
    }
    ok(&answer)
}

/// `GET /config/client?format=old`: the client configuration as the server
/// gives it, every value a string (`"MaxPostSize": "16383"`). Without
/// `format` the server answers 501, with another format 400.
pub(crate) async fn client_config(
    State(sim): State<Sim>,
    query: Query,
    headers: HeaderMap,
) -> ApiResult {
    match query.get("format") {
        None | Some("") => {
            return Err(ApiError::new(
                StatusCode::NOT_IMPLEMENTED,
                "api.config.client.old_format.app_error",
                "New format for the client configuration is not supported yet. Please specify format=old in the query string.",
            ));
        }
        Some("old") => {}
        Some(_) => return Err(ApiError::invalid_url_param("format")),
    }
    let state = sim.lock();
    let site_url = if state.site_url.is_empty() {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map_or(String::new(), |host| format!("http://{host}"))
    } else {
        state.site_url.clone()
    };
    let config = &state.config;
    ok(&json!({
        "Version": config.version,
        "BuildNumber": config.version,
        "BuildDate": "Mon Mar  2 09:00:00 UTC 2026",
        "BuildHash": "porter-mmsim",
        "BuildHashEnterprise": "none",
        "BuildEnterpriseReady": "false",
        "SiteURL": site_url,
        "SiteName": config.site_name,
        "MaxPostSize": config.max_post_size.to_string(),
        "MaxFileSize": config.max_file_size.to_string(),
        "EnableFileAttachments": "true",
        "EnableMobileFileDownload": "true",
        "EnableMobileFileUpload": "true",
        "EnablePublicLink": "false",
        "EnableCustomEmoji": "false",
        "EnableUserCreation": "false",
        "EnableSignInWithUsername": "true",
        "EnableSignInWithEmail": "true",
        "ShowEmailAddress": "true",
        "ShowFullName": "true",
        "TeammateNameDisplay": "username",
        "CollapsedThreads": "default_off",
        "ExperimentalViewArchivedChannels": "true",
        "DefaultClientLocale": "en",
        "AvailableLocales": "",
        "DiagnosticsEnabled": "false",
        "NoAccounts": "false",
        "InstallationDate": "1772442000000",
        "AboutLink": "",
        "HelpLink": "",
        "PluginsEnabled": "false",
    }))
}
