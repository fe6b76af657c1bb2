//! Rollback plans (issue 23 item 1): what a halted plan's committed stages said
//! would undo them, as a *new* plan that is reviewed like any other.
//!
//! Nothing is rolled back by itself. A reviewer or the plan's agent asks for the
//! rollback plan of a halted execution; this builds it — pure data, from the halted
//! plan's document and the stages that committed — and the engine proposes it. The
//! new plan's body names the halted plan (`rollback_of`: id, revision, hash), so the
//! approval binds *which* execution is being undone.
//!
//! Stages are undone in reverse order of commitment; only compensating stages can
//! run. Irreversible stages and described rollbacks cannot, so they are listed in
//! the plan's description for the reviewer instead.

use crate::canon::{Map, Value};
use crate::plan::{MAX_ID_LEN, PLAN_SCHEMA_VERSION, Plan, Rollback};

/// Why no rollback plan can be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RollbackPlanError {
    /// No committed stage has a compensating stage.
    #[error("nothing to roll back: no committed stage has a compensating stage{}", if .0.is_empty() { String::new() } else { format!(" ({})", .0.join("; ")) })]
    NothingToRollBack(Vec<String>),
    /// The rollback plan's id (`<plan_id>.rollback`) would be too long.
    #[error("the rollback plan's id `{0}` would exceed {MAX_ID_LEN} characters")]
    IdTooLong(String),
    /// A committed stage id is not in the plan.
    #[error("stage `{0}` is not in the halted plan")]
    NoSuchStage(String),
}

/// The id a halted plan's rollback plan gets.
pub fn rollback_plan_id(plan_id: &str) -> String {
    format!("{plan_id}.rollback")
}

/// Builds the rollback plan document of `halted` (revision `revision`), whose
/// stages `committed` committed (in order), proposed by the halted plan's proposer
/// at `created_at` (RFC 3339 UTC).
///
/// Each compensating stage becomes a stage with its parent's id; its own rollback
/// is the parent stage's forward action, so undoing the undo is reviewable too. The
/// halted body's extension fields are carried over (a policy that requires a ticket
/// requires it of the rollback as well).
pub fn rollback_plan(
    halted: &Plan,
    revision: i64,
    committed: &[String],
    created_at: &str,
) -> Result<Value, RollbackPlanError> {
    let plan_id = rollback_plan_id(&halted.plan_id);
    if plan_id.len() > MAX_ID_LEN {
        return Err(RollbackPlanError::IdTooLong(plan_id));
    }
    let stage_values = halted
        .body_value
        .get("stages")
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    let mut stages = Vec::new();
    let mut notes = Vec::new();
    for id in committed.iter().rev() {
        let index = halted
            .body
            .stages
            .iter()
            .position(|s| &s.id == id)
            .ok_or_else(|| RollbackPlanError::NoSuchStage(id.clone()))?;
        let stage = &halted.body.stages[index];
        let doc = stage_values.get(index).and_then(Value::as_object);
        match (&stage.rollback, doc) {
            (Some(Rollback::Compensate(_)), Some(doc)) => {
                let Some(Value::Object(undo)) = doc.get("rollback") else {
                    continue;
                };
                let mut out = Map::new();
                out.insert("id".into(), id.as_str().into());
                out.extend(undo.clone());
                // The rollback of the compensation is the stage it compensates.
                let forward: Map = doc
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "id" | "rollback"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                out.insert("rollback".into(), Value::Object(forward));
                stages.push(Value::Object(out));
            }
            (Some(Rollback::Irreversible { justification }), _) => {
                notes.push(format!("stage `{id}` is irreversible: {justification}"));
            }
            (Some(Rollback::Described(text)), _) => {
                notes.push(format!(
                    "stage `{id}` has a rollback for a human to do: {text}"
                ));
            }
            _ => {}
        }
    }
    if stages.is_empty() {
        return Err(RollbackPlanError::NothingToRollBack(notes));
    }
    let mut body = Map::new();
    body.insert("stages".into(), Value::Array(stages));
    for (k, v) in &halted.body.extensions {
        body.insert(k.clone(), v.clone());
    }
    let mut link = Map::new();
    link.insert("plan_id".into(), halted.plan_id.as_str().into());
    link.insert(
        "revision".into(),
        Value::Number(crate::canon::Number::from_i64(revision).expect("revisions are small")),
    );
    link.insert("plan_hash".into(), halted.hash().to_string().into());
    body.insert("rollback_of".into(), Value::Object(link));
    let mut description = format!(
        "Rolls back the committed stages of halted plan `{}` (revision {revision}, {}), newest first.",
        halted.plan_id,
        halted.hash()
    );
    for note in &notes {
        description.push_str("\nNot undone here: ");
        description.push_str(note);
    }
    let mut doc = Map::new();
    doc.insert("schema_version".into(), PLAN_SCHEMA_VERSION.into());
    doc.insert("plan_id".into(), plan_id.into());
    doc.insert(
        "title".into(),
        format!("Roll back: {}", halted.title).into(),
    );
    doc.insert("proposer".into(), halted.proposer.as_str().into());
    doc.insert("created_at".into(), created_at.into());
    doc.insert("description".into(), description.into());
    doc.insert("body".into(), Value::Object(body));
    Ok(Value::Object(doc))
}
