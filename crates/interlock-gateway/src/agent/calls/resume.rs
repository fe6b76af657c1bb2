//! Resume: a stateless client's retry of a held call (the 2026-07-28 round
//! trip). Its sealed state names the held plan to go on waiting for; a state
//! that is not the gateway's is an upstream's own round trip and passes
//! through untouched; one that fails its checks ends the call.

use interlock_store::ApiKeyRecord;

use super::request::Request;
use super::stop::Stop;
use crate::gateway::Gateway;
use crate::sessions::round_trip::{self, Presented};

/// The held plan a retry resumes waiting for, if the request carries the
/// gateway's state (then removed from what is forwarded).
pub(crate) fn resume(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    session: Option<&str>,
    request: &mut Request,
    args_digest: &str,
) -> Result<Option<String>, Stop> {
    if session.is_some() {
        return Ok(None);
    }
    let Some(presented) = round_trip::presented_state(&request.members) else {
        return Ok(None);
    };
    match gw.sealer().open(
        &presented,
        &agent.key_hash,
        &request.name,
        args_digest,
        gw.engine().now(),
    ) {
        Presented::NotOurs => Ok(None),
        Presented::Refused(why) => Err(Stop::InvalidParams(format!(
            "requestState refused ({why}); call again without it"
        ))),
        Presented::Held(state) => {
            request.members.shift_remove("requestState");
            request.members.shift_remove("inputResponses");
            Ok(Some(state.plan))
        }
    }
}
