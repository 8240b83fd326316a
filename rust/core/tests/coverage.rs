//! Lists every rule arm that still returns `RuleMissing`, and checks that the
//! example list covers every primitive name.

use microjax::prims::rules::missing_rules;
use microjax::Primitive;

#[test]
fn no_rule_arm_is_missing() {
    let missing = missing_rules();
    println!("{} rule arms still missing:", missing.len());
    for (prim, rule) in &missing {
        println!("  {prim:<24} {rule}");
    }
    let names = Primitive::all_names();
    assert!(missing.iter().all(|(p, _)| names.contains(p)));
    // Every primitive has its jvp, transpose and batch rules (a
    // non-differentiable or non-linear one says so in its own arm).
    assert!(missing.is_empty(), "rule arms missing: {missing:?}");
}

#[test]
fn examples_cover_every_primitive_name() {
    let mut from_examples: Vec<&str> = Primitive::examples().iter().map(|p| p.name()).collect();
    let mut names = Primitive::all_names();
    from_examples.sort_unstable();
    names.sort_unstable();
    assert_eq!(from_examples, names);
}
