//! The client's calls about the server itself: its client configuration
//! (version and limits) and a ping.

use crate::client::{Ask, Client};
use crate::error::{Error, Target, Thing};
use crate::model::{ClientConfig, Ping};

impl Client {
    /// `client_config` is the server's client configuration: its version
    /// and limits.
    pub async fn client_config(&self) -> Result<ClientConfig, Error> {
        let ask = Ask::new("read the configuration of", Target::own(Thing::Server));
        let map = self
            .get(&["config", "client"], &[("format", "old".to_owned())], &ask)
            .await?;
        Ok(ClientConfig::from_map(map))
    }

    /// `ping` asks whether the server is up, and keeps the answer's
    /// `X-Version-Id` header, which names the server's version.
    pub async fn ping(&self) -> Result<Ping, Error> {
        let ask = Ask::new("reach", Target::own(Thing::Server));
        let url = self.api_url(&["system", "ping"]);
        let response = self.send(&ask, || self.http.get(url.clone())).await?;
        let version_id = response
            .headers()
            .get("x-version-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut ping: Ping = self.read_json(response, &ask.target).await?;
        ping.version_id = version_id;
        Ok(ping)
    }
}
