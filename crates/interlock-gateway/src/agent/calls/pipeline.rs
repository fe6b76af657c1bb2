//! One tool call, from an authenticated agent to its answer, as a stack of
//! stages, each a module with one job; their order is [`path`]:
//!
//! 1. [`route`]: what was called, whether the role may call it, whether it is
//!    served now (governance tools are answered here);
//! 2. the arguments read ([`request`]) and, for a stateless retry of a held
//!    call, the plan it resumes waiting for ([`resume`]);
//! 3. [`limit`]: the key's rate and quota;
//! 4. [`inspect`]: the arguments assessed and held against the envelope;
//! 5. [`authorize`]: stopped, held (or covered by a standing approval, or
//!    approved already), or forwarded, and on what basis;
//! 6. [`forward`]: logged as intended, sent, its answer scanned and settled.
//!
//! A stage that ends the call returns a [`Stop`]; it becomes the JSON-RPC
//! answer in one place, here. Every verdict about a call is written as exactly
//! one `tool.call` leaf ([`super::settle`]), and a verdict whose leaf cannot be
//! written is never answered as if it were logged.
//!
//! [`route`]: super::route
//! [`request`]: super::request
//! [`resume`]: super::resume
//! [`limit`]: super::limit
//! [`inspect`]: super::inspect
//! [`authorize`]: super::authorize
//! [`forward`]: super::forward

use std::sync::OnceLock;
use std::time::Instant;

use interlock_store::ApiKeyRecord;
use serde_json::value::RawValue;

use super::call::Call;
pub(crate) use super::call::Origin;
use super::leaf::{Bound, new_call_id};
use super::request::Request;
use super::stop::Stop;
use super::{authorize, forward, inspect, limit, resume, route};
use crate::gateway::Gateway;
use interlock_trust::held_id::arguments_digest;

/// `tools/call`: the whole path of one call.
pub(crate) async fn tools_call(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    origin: &Origin<'_>,
) -> Vec<u8> {
    path(gw, agent, id, params, origin)
        .await
        .unwrap_or_else(|stop| stop.into_answer(id))
}

/// The stages, in order.
async fn path(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    origin: &Origin<'_>,
) -> Result<Vec<u8>, Stop> {
    let arrived = Instant::now();
    let mut request = Request::parse(params).map_err(|why| Stop::InvalidParams(why.to_owned()))?;
    let name = request.name.clone();
    let routed = route::route(gw, agent, id, &request).await?;
    let args = request.read_arguments()?;
    let args_digest = arguments_digest(&args).to_string();
    let resume = resume::resume(gw, agent, origin.session, &mut request, &args_digest)?;
    let settings = limit::limit(
        gw,
        agent,
        id,
        &routed,
        &args_digest,
        resume.is_some(),
        origin,
    )
    .await?;
    let inspected = inspect::inspect(gw, agent, &routed, &args).await;
    let call = Call {
        gw,
        agent,
        id,
        exposed: &name,
        server: routed.server(),
        tool: &routed.tool,
        args: &args,
        args_digest: &args_digest,
        assessment: &inspected.assessment,
        session: origin.session,
        hold_secs: origin.hold_secs.unwrap_or(gw.config().calls.hold_secs),
        cancelled: origin.cancelled,
        call_id: new_call_id(),
        bound: Bound::of(&routed.view, &routed.tool),
        before: &inspected.before,
        intent: OnceLock::new(),
        arrived,
    };
    let basis = authorize::authorize(&call, &routed, resume.as_deref(), origin.progress).await?;
    Ok(forward::forward(
        &call,
        &routed,
        request,
        &settings,
        basis,
        &inspected.before,
        origin.progress,
    )
    .await)
}
