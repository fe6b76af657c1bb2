//! `POST /api/v1/signin`: a one-time sign-in link redeemed (issue 19) — the
//! browser that holds it registers its key and becomes a reviewer. The links
//! themselves are [`crate::signin`].

use crate::signin::{SigninError, valid_name};
use interlock_trust::events::EventType;

/// `POST /api/v1/signin`'s body.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigninRequest {
    /// The token from the link.
    pub token: String,
    /// The browser's approver public key: 32 raw Ed25519 bytes as 64 hex digits.
    pub public_key: String,
    /// Who signs in: the reviewer key's name, the approver's `human:NAME`.
    pub name: String,
}

/// `POST /api/v1/signin`: trades a one-time token for a reviewer API key and
/// registers the browser's approver key as `human:NAME`. No API key needed
/// (the token is the authority); the request is checked before the token is
/// spent, so a malformed one does not burn it. Three leaves record it:
/// `apikey.issued`, `approver.registered` (unless the key already was) and
/// `signin.redeemed`, which ties them to the link's `signin.issued`.
pub async fn redeem_handler(
    axum::extract::State(gw): axum::extract::State<crate::Gateway>,
    crate::extract::Body(req): crate::extract::Body<SigninRequest>,
) -> Result<axum::response::Response, crate::extract::ApiError> {
    use crate::extract::ApiError;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse as _;
    let invalid = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "invalid", m.to_owned());
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(&req.public_key, &mut bytes)
        .map_err(|_| invalid("public_key must be 64 hex digits (a raw Ed25519 public key)"))?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
        .map_err(|_| invalid("public_key is not a valid Ed25519 point"))?;
    if !valid_name(&req.name) {
        return Err(invalid(
            "name must be 1–64 letters, digits, '.', '_', '-' or '@'",
        ));
    }
    let refused = |e: SigninError| {
        tracing::warn!("sign-in refused: {e}");
        match e {
            SigninError::Invalid => {
                ApiError::new(StatusCode::UNAUTHORIZED, "invalid_signin", e.to_string())
            }
            SigninError::RateLimited => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", e.to_string())
            }
        }
    };
    // The token is the authority: checked first (unspent), so nothing about
    // the approvers is told to a caller without one.
    gw.signin().verify(&req.token).map_err(refused)?;
    let engine = gw.engine();
    // An identity is one person's (issue 39 item 15): quorum counts
    // identities, so a browser may not sign in as an approver who exists
    // with another key. Refused before the link is spent.
    let identity = format!("human:{}", req.name);
    let new_key_id = interlock_core::decision::KeyId::of(&key).to_string();
    let (_, approvers) = engine.trusted_approvers().await?;
    if approvers
        .iter()
        .any(|a| a.identity == identity && a.key_id != new_key_id)
    {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "identity_taken",
            format!("{identity} is another approver's identity; sign in under another name"),
        ));
    }
    let token_hash = gw.signin().redeem(&req.token).map_err(refused)?;
    let (api_key, record) = crate::keys::issue_key(
        engine,
        interlock_store::ApiKeyKind::Reviewer,
        &req.name,
        "reviewer",
        crate::keys::IssuedBy::SigninLink,
        false,
    )
    .await?;
    let key_id = engine
        .register_approver(&key, &identity, "browser key (sign-in link)")
        .await?;
    // Registered before under another name: that registration stands.
    let identity = engine
        .store()
        .approver_key(&key_id.to_string())
        .await?
        .map_or(identity, |k| k.identity);
    let mut m = interlock_canon::Map::new();
    m.insert("token_hash".into(), token_hash.into());
    m.insert("key_hash".into(), record.key_hash.as_str().into());
    m.insert("key_id".into(), key_id.to_string().into());
    m.insert("identity".into(), identity.as_str().into());
    engine.record(EventType::SigninRedeemed.as_str(), m).await?;
    tracing::info!(%identity, "a browser signed in with a one-time link");
    Ok((
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(serde_json::json!({
            "key": api_key,
            "name": req.name,
            "identity": identity,
            "key_id": key_id.to_string(),
        })),
    )
        .into_response())
}
