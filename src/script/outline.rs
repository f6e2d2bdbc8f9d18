//! What a runbook's syntax tree says before it runs: the parameters it declares (`--set` keys
//! for completions) and the house rules `check` warns about: a call that changes the target
//! before any cleanup is registered, and a step without a name.

use std::collections::BTreeMap;

use rhai::{AST, ASTNode, Engine, Expr, OptimizationLevel, Position};

use super::stdlib;

/// Host functions that change the target in a way a cleanup can put back (each is journaled
/// with what undoes it). Deletions are left out: nothing registered before them could bring
/// back what they remove, and teardown runbooks are made of them.
const MUTATING: &[&str] = &[
    "ec2::allocate_address",
    "ec2::authorize",
    "ec2::create_nat_gateway",
    "ec2::create_security_group",
    "ec2::create_subnet",
    "ec2::create_vpc",
    "ec2::revoke",
    "eks::create_addon",
    "eks::create_cluster",
    "eks::create_nodegroup",
    "eks::scale_nodegroup",
    "helm::apply",
    "iam::attach_role_policy",
    "iam::create_oidc_provider",
    "iam::create_role",
    "iam::detach_role_policy",
    "k8s::apply",
    "k8s::patch",
    "k8s::quarantine",
    "kms::create_key",
    "twin::fault",
];

/// A warning `check` prints: where, what, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lint {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: String,
}

/// What a call does, as far as the rules care.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Effect {
    /// It changes the target before it has registered a cleanup of its own (a helper that
    /// registers one first, as `gpu::ensure_nodes` does, guards itself).
    mutates: bool,
    registers_cleanup: bool,
}

/// A call in the tree: its full name (`eks::scale_nodegroup`, `gpu::scale_up`, `step`), where
/// it is, and its first argument when that is a string literal.
struct Call {
    name: String,
    position: Position,
    first_text: Option<String>,
    /// `eks::scale_nodegroup(c, g, 0, ...)`: a scale-down, which is what a cleanup does.
    to_zero: bool,
}

fn parser() -> Engine {
    let mut engine = Engine::new_raw();
    // The tree as written: constant folding would move or drop calls.
    engine.set_optimization_level(OptimizationLevel::None);
    // As deep as the host's engine allows (a raw engine's limit is lower).
    engine.set_max_expr_depths(
        super::engine::MAX_EXPR_DEPTH,
        super::engine::MAX_FN_EXPR_DEPTH,
    );
    engine
}

/// The keys of the map the runbook passes to `params(...)`, in order.
pub fn param_keys(text: &str) -> Vec<String> {
    let Ok(ast) = parser().compile(text) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        if let Some(ASTNode::Expr(Expr::FnCall(call, _))) = path.last()
            && call.name == "params"
            && call.namespace.is_empty()
            && let Some(Expr::Map(map, _)) = call.args.first()
        {
            keys.extend(map.0.iter().map(|(ident, _)| ident.name.to_string()));
        }
        true
    });
    keys
}

/// Every call in an AST (its statements and its functions' bodies).
fn calls_in(ast: &AST) -> Vec<Call> {
    let mut calls = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        if let Some(ASTNode::Expr(Expr::FnCall(call, position))) = path.last() {
            let name = if call.namespace.is_empty() {
                call.name.to_string()
            } else {
                format!("{}::{}", call.namespace, call.name)
            };
            let first_text = match call.args.first() {
                Some(Expr::StringConstant(text, _)) => Some(text.to_string()),
                _ => None,
            };
            let to_zero = matches!(call.args.get(2), Some(Expr::IntegerConstant(0, _)));
            calls.push(Call {
                name,
                position: *position,
                first_text,
                to_zero,
            });
        }
        true
    });
    calls
}

/// The function `name` of a script alone, as an AST of its own. (Rhai's
/// `clone_functions_only_filtered` keeps every function when it copies into an empty module,
/// so the copy is narrowed with `retain_functions`.)
fn body_of(ast: &AST, name: &str) -> AST {
    let mut one = ast.clone();
    one.clear_statements();
    one.retain_functions(|_, _, n, _| n == name);
    one
}

/// The effect of each named function of a script (its closures aside), as seen from its
/// calls: changes the target, registers a cleanup. Calls to other functions of the same
/// script count through them (to a fixed point).
fn function_effects(
    ast: &AST,
    prefix: &str,
    known: &BTreeMap<String, Effect>,
) -> BTreeMap<String, Effect> {
    let bodies: Vec<(String, Vec<Call>)> = ast
        .iter_fn_def()
        .filter(|f| !f.name.starts_with("anon$"))
        .map(|f| {
            let mut calls = calls_in(&body_of(ast, &f.name));
            calls.sort_by_key(|c| (c.position.line(), c.position.position()));
            (f.name.to_string(), calls)
        })
        .collect();
    let mut effects: BTreeMap<String, Effect> = BTreeMap::new();
    loop {
        let mut changed = false;
        for (name, calls) in &bodies {
            let mut effect = Effect::default();
            for call in calls {
                let of = effect_of(call, known, &effects);
                effect.mutates |= of.mutates && !effect.registers_cleanup;
                effect.registers_cleanup |= of.registers_cleanup;
            }
            if effects.get(name) != Some(&effect) {
                effects.insert(name.clone(), effect);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    effects
        .into_iter()
        .map(|(name, effect)| (format!("{prefix}{name}"), effect))
        .collect()
}

fn effect_of(
    call: &Call,
    known: &BTreeMap<String, Effect>,
    local: &BTreeMap<String, Effect>,
) -> Effect {
    let name = call.name.as_str();
    if name == "defer" {
        return Effect {
            mutates: false,
            registers_cleanup: true,
        };
    }
    // A scale to 0 and a fault switched off are what cleanups do.
    let undoing = (name == "eks::scale_nodegroup" && call.to_zero)
        || (name == "twin::fault"
            && call
                .first_text
                .as_deref()
                .is_some_and(|spec| spec.ends_with("=off") || spec.starts_with("heal=")));
    if MUTATING.contains(&name) && !undoing {
        return Effect {
            mutates: true,
            registers_cleanup: false,
        };
    }
    known
        .get(name)
        .or_else(|| local.get(name))
        .copied()
        .unwrap_or_default()
}

/// The stdlib modules' functions' effects, by `module::name` (an import's alias is the module's
/// name in every shipped runbook; another alias is not followed). Worked out once: `check`
/// lints every file against the same stdlib.
fn stdlib_effects() -> &'static BTreeMap<String, Effect> {
    static EFFECTS: std::sync::OnceLock<BTreeMap<String, Effect>> = std::sync::OnceLock::new();
    EFFECTS.get_or_init(|| {
        let mut effects = BTreeMap::new();
        for name in stdlib::names() {
            if let Some(ast) = stdlib::find(name).and_then(|text| parser().compile(text).ok()) {
                effects.extend(function_effects(
                    &ast,
                    &format!("{name}::"),
                    &BTreeMap::new(),
                ));
            }
        }
        effects
    })
}

/// The house rules for a runbook's text; none when it does not parse (`check` reports that).
pub fn lint_text(text: &str) -> Vec<Lint> {
    parser()
        .compile(text)
        .map(|ast| lints(&ast))
        .unwrap_or_default()
}

/// The house rules, in source order: a call that changes the target before the first call
/// that registers a cleanup (text order, which is the order a runbook's top level runs in),
/// and a step named with an empty string.
fn lints(ast: &AST) -> Vec<Lint> {
    let known = stdlib_effects();
    let local = function_effects(ast, "", known);
    // The top level and its closures (the bodies of steps and cleanups), not named functions,
    // which count where they are called.
    let mut top_level = ast.clone();
    top_level.retain_functions(|_, _, name, _| name.starts_with("anon$"));
    let mut calls = calls_in(&top_level);
    calls.sort_by_key(|c| (c.position.line(), c.position.position()));
    let mut lints = Vec::new();
    let mut cleanup_seen = false;
    for call in &calls {
        let effect = effect_of(call, known, &local);
        let (line, column) = (
            call.position.line().unwrap_or(0),
            call.position.position().unwrap_or(0),
        );
        if effect.mutates && !cleanup_seen {
            lints.push(Lint {
                line,
                column,
                message: format!(
                    "`{}` changes the target before any cleanup is registered",
                    call.name
                ),
                help: "register what puts it back first (`defer(\"...\", || ...)` or a stdlib helper such as `gpu::back_to_zero_later(p)`), so that an interrupted or failing run undoes it".into(),
            });
        }
        cleanup_seen |= effect.registers_cleanup;
        if call.name == "step"
            && call
                .first_text
                .as_deref()
                .is_some_and(|t| t.trim().is_empty())
        {
            lints.push(Lint {
                line,
                column,
                message: "a step without a name".into(),
                help: "name it (`step(\"GPU scale-up\", || ...)`): reports, JUnit and the history know steps by name".into(),
            });
        }
    }
    lints
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lints_of(text: &str) -> Vec<(usize, String)> {
        let ast = parser().compile(text).expect("parses");
        lints(&ast)
            .into_iter()
            .map(|l| (l.line, l.message))
            .collect()
    }

    #[test]
    fn params_keys_come_in_order() {
        let text =
            "let p = params(#{ cluster: \"myeks5w\", gpu_nodes: 2 }, #{ check: #{} });\nprint(p);";
        assert_eq!(param_keys(text), ["cluster", "gpu_nodes"]);
        assert!(param_keys("let x = 1;").is_empty());
    }

    #[test]
    fn a_change_before_any_cleanup_is_flagged_and_after_one_is_not() {
        let early = "eks::scale_nodegroup(\"c\", \"gpu\", 2);\ndefer(\"back\", || eks::scale_nodegroup(\"c\", \"gpu\", 0));";
        assert_eq!(
            lints_of(early),
            [(
                1,
                "`eks::scale_nodegroup` changes the target before any cleanup is registered"
                    .to_string()
            )]
        );
        let late = "defer(\"back\", || eks::scale_nodegroup(\"c\", \"gpu\", 0));\nstep(\"up\", || eks::scale_nodegroup(\"c\", \"gpu\", 2));";
        assert!(lints_of(late).is_empty(), "{:?}", lints_of(late));
    }

    #[test]
    fn local_and_stdlib_functions_count_through_their_calls() {
        let local = "fn up() { ec2::revoke(\"sg-1\", #{}) }\nup();";
        assert_eq!(lints_of(local).len(), 1);
        let helper = "gpu::back_to_zero_later(#{});\nstep(\"up\", || gpu::scale_up(#{}));";
        assert!(lints_of(helper).is_empty(), "{:?}", lints_of(helper));
        let unguarded = "step(\"up\", || gpu::scale_up(#{}));";
        assert_eq!(
            lints_of(unguarded)[0].1,
            "`gpu::scale_up` changes the target before any cleanup is registered"
        );
    }

    #[test]
    fn a_twin_fault_wants_its_cleanup_first_and_switching_one_off_does_not() {
        assert_eq!(lints_of("twin::fault(\"link-down=onprem\");").len(), 1);
        assert!(lints_of("twin::fault(\"link-down=off\");").is_empty());
        assert!(
            lints_of("defer(\"back\", || twin::fault(\"link-down=off\"));\ntwin::fault(\"link-down=onprem\");")
                .is_empty()
        );
    }

    #[test]
    fn a_scale_to_zero_is_a_cleanups_kind_of_change() {
        assert!(lints_of("eks::scale_nodegroup(\"c\", \"gpu\", 0);").is_empty());
        assert_eq!(
            lints_of("eks::scale_nodegroup(\"c\", \"gpu\", 1);").len(),
            1
        );
    }

    #[test]
    fn an_empty_step_name_is_flagged() {
        assert_eq!(
            lints_of("step(\"\", || 1);"),
            [(1, "a step without a name".to_string())]
        );
        assert!(lints_of("step(\"named\", || 1);").is_empty());
    }
}
