//! Any single-field change to a tool changes its hash and yields a drift.

mod common;

use common::*;
use interlock_surface::{diff, surface_hash, tool_hash};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Paths (object keys from the tool root) of every leaf and object member in `v`.
fn paths(v: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(m) = v {
        for (k, child) in m {
            let mut p = prefix.clone();
            p.push(k.clone());
            out.push(p.clone());
            paths(child, p, out);
        }
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| &mut v[k.as_str()])
}

#[derive(Debug, Clone)]
enum Edit {
    Replace(Value),
    Remove,
    AddSibling(String, Value),
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        "[a-zA-Z ./:<>~_]{0,24}".prop_map(Value::from),
        Just(json!({"type": "string"})),
        Just(json!(["a", "b"])),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        leaf().prop_map(Edit::Replace),
        Just(Edit::Remove),
        ("[a-z]{1,8}", leaf()).prop_map(|(k, v)| Edit::AddSibling(format!("x{k}"), v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn single_field_change_is_seen(tool_ix in 0usize..3, path_ix in any::<prop::sample::Index>(), e in edit()) {
        let ts = tools();
        let tool = &ts[tool_ix];
        let mut all = Vec::new();
        paths(tool, vec![], &mut all);
        // The name identifies the tool; changing it is a rename/add/remove, tested elsewhere.
        all.retain(|p| p != &["name".to_string()]);
        let path = path_ix.get(&all).clone();
        let mut changed = tool.clone();
        match &e {
            Edit::Replace(v) => *get_mut(&mut changed, &path) = v.clone(),
            Edit::Remove => {
                let (last, parent) = path.split_last().unwrap();
                get_mut(&mut changed, parent).as_object_mut().unwrap().remove(last);
            }
            Edit::AddSibling(k, v) => {
                let parent = get_mut(&mut changed, &path[..path.len() - 1]);
                parent.as_object_mut().unwrap().insert(k.clone(), v.clone());
            }
        }
        // Reordering `required` is not a change by design; skip edits that are no-ops.
        let norm = |v: &Value| {
            let s = surface_of(std::slice::from_ref(v), None);
            tool_hash(s.tools().values().next().unwrap())
        };
        prop_assume!(changed != *tool);
        let before = surface_of(&ts, None);
        let mut after_tools = ts.clone();
        after_tools[tool_ix] = changed;
        let after = surface_of(&after_tools, None);
        let name = tool["name"].as_str().unwrap();
        prop_assert_ne!(norm(tool), norm(&after_tools[tool_ix]));
        prop_assert_ne!(tool_hash(before.tool(name).unwrap()), tool_hash(after.tool(name).unwrap()));
        prop_assert_ne!(surface_hash(&before), surface_hash(&after));
        let d = diff(&before, &after);
        prop_assert!(!d.is_empty(), "no drift for {:?} at {:?}", e, path);
        prop_assert!(d.iter().all(|d| d.tool.as_deref() == Some(name)));
    }
}
