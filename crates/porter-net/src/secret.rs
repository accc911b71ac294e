//! One type for a credential held in memory (a token, an access key's
//! secret), so that no `Debug` of a config, a request or an error can print
//! it.

/// `Secret` holds a credential. Its `Debug` shows only that one is there;
/// [`Secret::expose`] is the one way to the text, for the header or signer
/// it goes into. In a config file it is written as a plain string, and
/// serialized back as one (the file's own text, which may be an
/// `${ENV_NAME}` rather than the credential).
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// `new` wraps a credential.
    #[must_use]
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// `expose` is the credential itself.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn a_secret_shows_that_it_is_there_and_never_what_it_is() {
        let secret = Secret::new("wJalr-never-shown");
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(Secret(…))");
        assert_eq!(secret.expose(), "wJalr-never-shown");
    }

    #[test]
    fn a_secret_is_read_and_written_as_a_plain_string() {
        let secret: Secret = serde_json::from_str(r#""${S3_SECRET}""#).expect("a string");
        assert_eq!(secret.expose(), "${S3_SECRET}");
        assert_eq!(
            serde_json::to_string(&secret).expect("serializes"),
            r#""${S3_SECRET}""#
        );
        let refused = serde_json::from_str::<Secret>("42").expect_err("not a string");
        assert!(
            refused.to_string().contains("expected a string"),
            "{refused}"
        );
    }
}
