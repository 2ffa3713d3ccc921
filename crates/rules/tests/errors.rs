//! The errors of the rule language, one test per kind: each test loads a
//! small bad rules text with `load_text` and checks where the error is
//! (line and column) and what it says (`expected`, `found`, `hint`).
//! Parser errors stop at the first one; the type checker reports every
//! error of a file, in file order. No solver is needed.

use traceopt_ir::ParseError;
use traceopt_rules::load_text;

/// Every error of `text`; panics if it loads.
fn errors(text: &str) -> Vec<ParseError> {
    match load_text("t.rules", text) {
        Ok(file) => panic!(
            "expected an error, but the text loaded ({} rule(s)):\n{text}",
            file.rules.len()
        ),
        Err(errors) => {
            assert!(!errors.is_empty(), "an empty error list for:\n{text}");
            errors
        }
    }
}

/// The first error of `text`; panics if it loads.
fn error(text: &str) -> ParseError {
    errors(text).remove(0)
}

/// Asserts the place of `e`, showing it in full when it is elsewhere.
fn assert_at(e: &ParseError, line: u32, col: u32) {
    assert_eq!((e.line, e.col), (line, col), "wrong place for: {e}");
}

/// Asserts that `e`'s hint mentions `what`.
fn assert_hint(e: &ParseError, what: &str) {
    let hint = e
        .hint
        .as_deref()
        .unwrap_or_else(|| panic!("no hint in: {e}"));
    assert!(hint.contains(what), "the hint should mention {what:?}: {e}");
}

// Ops.

#[test]
fn unknown_op() {
    let e = error(
        "\
r: int_frobnicate(x)
    => x
",
    );
    assert_eq!(e.file, "t.rules");
    assert_at(&e, 1, 4);
    assert!(e.expected.contains("op table"), "{e}");
    assert_eq!(e.found, "'int_frobnicate'");
    assert_hint(&e, "traceopt ops");
}

#[test]
fn non_integer_op_in_pattern() {
    let e = error(
        "\
r: getfield_gc_i(x)
    => x
",
    );
    assert_at(&e, 1, 4);
    assert!(e.expected.contains("integer op"), "{e}");
    assert_eq!(e.found, "'getfield_gc_i'");
    assert_hint(&e, "integer ops only");
}

#[test]
fn float_op_in_target() {
    let e = error(
        "\
r: int_add(x, y)
    => float_add(x, y)
",
    );
    assert_at(&e, 2, 8);
    assert!(e.expected.contains("integer op"), "{e}");
    assert_eq!(e.found, "'float_add'");
}

#[test]
fn wrong_arity_in_pattern() {
    let e = error(
        "\
r: int_add(x)
    => x
",
    );
    assert_at(&e, 1, 4);
    assert_eq!(e.expected, "2 argument(s) for int_add");
    assert_eq!(e.found, "1");
}

#[test]
fn wrong_arity_in_target() {
    let e = error(
        "\
r: int_sub(0, x)
    => int_neg(x, x)
",
    );
    assert_at(&e, 2, 8);
    assert_eq!(e.expected, "1 argument(s) for int_neg");
    assert_eq!(e.found, "2");
}

// Names.

#[test]
fn unbound_name_in_target() {
    let e = error(
        "\
r: int_add(x, 0)
    => int_sub(x, y)
",
    );
    assert_at(&e, 2, 19);
    assert!(e.expected.contains("bound in the pattern"), "{e}");
    assert_eq!(e.found, "'y'");
    assert_hint(&e, "only use what the rule has bound");
}

#[test]
fn unbound_name_in_check() {
    let e = error(
        "\
r: int_add(x, C)
    check D > 0
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "a bound variable");
    assert_eq!(e.found, "'D'");
    assert_hint(&e, "earlier assignment");
}

#[test]
fn name_used_before_its_assignment() {
    let e = error(
        "\
r: int_add(x, C1)
    check C > 0
    C = C1 + 1
    => int_add(x, C)
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "a bound variable");
    assert_eq!(e.found, "'C'");
}

#[test]
fn name_assigned_twice() {
    let e = error(
        "\
r: int_add(x, C1)
    C = C1 + 1
    C = C1 + 2
    => int_add(x, C)
",
    );
    assert_at(&e, 3, 5);
    assert_eq!(e.expected, "a new name");
    assert_eq!(e.found, "'C', bound already");
    assert_hint(&e, "bound once");
}

#[test]
fn error_in_a_repeated_assignment() {
    // Both errors of the line are reported, in column order.
    let es = errors(
        "\
r: int_add(x, C1)
    C = C1 + 1
    C = frob(C1)
    => int_add(x, C)
",
    );
    let found: Vec<&str> = es.iter().map(|e| e.found.as_str()).collect();
    assert_eq!(found, ["'C', bound already", "'frob'"], "{es:#?}");
}

#[test]
fn duplicate_rule_name() {
    let e = error(
        "\
r: int_add(x, 0)
    => x

r: int_sub(x, 0)
    => x
",
    );
    assert_at(&e, 4, 1);
    assert_eq!(e.expected, "a new rule name");
    assert_eq!(e.found, "'r', used at line 1 already");
}

// Methods, attributes and helpers.

#[test]
fn unknown_method() {
    let e = error(
        "\
r: int_add(x, 0)
    check x.is_frob()
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "a known method");
    assert_eq!(e.found, "'is_frob'");
    assert_hint(&e, "known_ge_const");
}

#[test]
fn unknown_attribute() {
    let e = error(
        "\
r: int_add(x, 0)
    check x.low > 0
    => x
",
    );
    assert_at(&e, 2, 11);
    assert!(e.expected.contains("lower"), "{e}");
    assert_eq!(e.found, "'low'");
}

#[test]
fn unknown_helper() {
    let e = error(
        "\
r: int_mul(x, C)
    shift = log2(C)
    => int_lshift(x, shift)
",
    );
    assert_at(&e, 2, 13);
    assert_eq!(e.expected, "a helper function");
    assert_eq!(e.found, "'log2'");
    assert_hint(&e, "highest_bit");
}

#[test]
fn method_argument_count() {
    let e = error(
        "\
r: int_add(x, 0)
    check x.known_ge_const()
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "1 argument(s) for known_ge_const");
    assert_eq!(e.found, "0");
}

#[test]
fn helper_argument_count() {
    let e = error(
        "\
r: int_add(x, C1)
    C = min(C1)
    => int_add(x, C)
",
    );
    assert_at(&e, 2, 9);
    assert_eq!(e.expected, "2 argument(s) for min");
    assert_eq!(e.found, "1");
}

#[test]
fn attribute_on_c_variable() {
    let e = error(
        "\
r: int_add(x, C)
    check C.lower > 0
    => x
",
    );
    assert_at(&e, 2, 11);
    assert!(e.expected.contains("non-constant pattern variable"), "{e}");
    assert_eq!(e.found, "'C', an integer");
    assert_hint(&e, "`C` variables are plain integers");
}

// Types.

#[test]
fn check_that_is_an_integer() {
    let e = error(
        "\
r: int_add(x, 0)
    check x.lower
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "a truth value");
    assert_eq!(e.found, "an integer");
}

#[test]
fn arithmetic_on_a_bound() {
    let e = error(
        "\
r: int_add(x, 0)
    check x + 1 > 0
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "an integer");
    assert_eq!(e.found, "a pattern variable's bound");
    assert_hint(&e, "x.lower");
}

#[test]
fn and_on_integers() {
    // Both operands are wrong, and both are reported.
    let es = errors(
        "\
r: int_and(x, C)
    check C and 1
    => x
",
    );
    assert_eq!(es.len(), 2, "{es:?}");
    for (e, col) in es.iter().zip([11, 17]) {
        assert_at(e, 2, col);
        assert_eq!(e.expected, "a truth value");
        assert_eq!(e.found, "an integer");
    }
}

#[test]
fn c_variable_assigned_a_truth_value() {
    let e = error(
        "\
r: int_add(x, C1)
    C2 = x.is_bool()
    => int_add(x, C2)
",
    );
    assert_at(&e, 2, 5);
    assert!(e.expected.contains("'C2'"), "{e}");
    assert_eq!(e.found, "a truth value");
    assert_hint(&e, "hold integers");
}

// Overflow-checking ops.

#[test]
fn ovf_op_in_target_of_a_non_ovf_pattern() {
    let e = error(
        "\
r: int_add(x, y)
    => int_add_ovf(x, y)
",
    );
    assert_at(&e, 2, 8);
    assert_eq!(e.expected, "an op without an overflow check");
    assert_eq!(e.found, "'int_add_ovf'");
    assert_hint(&e, "guard_no_overflow");
}

#[test]
fn ovf_op_nested_in_target() {
    let e = error(
        "\
r: int_add_ovf(x, y)
    => int_sub(int_add_ovf(x, y), 0)
",
    );
    assert_at(&e, 2, 16);
    assert_eq!(e.expected, "an op without an overflow check");
    assert_eq!(e.found, "'int_add_ovf'");
}

// The pattern's root.

#[test]
fn pattern_root_is_a_variable() {
    let e = error(
        "\
r: x
    => x
",
    );
    assert_at(&e, 1, 4);
    assert_eq!(e.expected, "an op at the root of the pattern");
    assert_eq!(e.found, "'x'");
}

#[test]
fn pattern_root_is_a_constant() {
    let e = error(
        "\
r: 0
    => 0
",
    );
    assert_at(&e, 1, 4);
    assert_eq!(e.expected, "an op at the root of the pattern");
    assert_eq!(e.found, "'0'");
}

// Splits.

#[test]
fn split_twice() {
    let e = error(
        "\
r: int_pydiv(x, C)
    check C > 0 and C & (C - 1) == 0
    shift = highest_bit(C)
    split C == 1 << k for k in 0..63
    split C == 1 << k for k in 0..63
    => int_rshift(x, shift)
",
    );
    assert_at(&e, 5, 5);
    assert_eq!(e.expected, "one split per rule");
    assert_eq!(e.found, "a second");
}

#[test]
fn bad_split_range() {
    let e = error(
        "\
r: int_pydiv(x, C)
    check C > 0 and C & (C - 1) == 0
    shift = highest_bit(C)
    split C == 1 << k for k in 0..0
    => int_rshift(x, shift)
",
    );
    assert_at(&e, 4, 5);
    assert_eq!(e.expected, "a range of 1 to 256 cases");
    assert_eq!(e.found, "0..0");
}

#[test]
fn split_range_too_wide_for_64_bits() {
    let e = error(
        "\
r: int_pydiv(x, C)
    split C == 1 << k for k in -1..0x7fffffffffffffff
    => x
",
    );
    assert_at(&e, 2, 5);
    assert_eq!(e.expected, "a range of 1 to 256 cases");
}

// Parser errors.

#[test]
fn missing_arrow_at_end_of_file() {
    let e = error(
        "\
r: int_add(x, 0)
    check x.lower >= 0
",
    );
    assert_at(&e, 3, 1);
    assert_eq!(e.expected, "'=> target'");
    assert_eq!(e.found, "the end of the file");
    assert_hint(&e, "every rule ends with '=> target'");
}

#[test]
fn garbage_character() {
    let e = error(
        "\
r: int_add(x, 0)
    check $x > 0
    => x
",
    );
    assert_at(&e, 2, 11);
    assert_eq!(e.expected, "a name, a number or an operator");
    assert_eq!(e.found, "'$x > 0'");
}

#[test]
fn bad_integer() {
    let e = error(
        "\
r: int_add(x, 12abc)
    => x
",
    );
    assert_at(&e, 1, 15);
    assert_eq!(e.expected, "an integer");
    assert_eq!(e.found, "'12abc'");
    assert_hint(&e, "at most 64 bits");

    // Too big for 64 bits.
    let e = error(
        "\
r: int_add(x, 0)
    check x.lower > 0x1_0000_0000_0000_0000
    => x
",
    );
    assert_at(&e, 2, 21);
    assert_eq!(e.expected, "an integer");
    assert_eq!(e.found, "'0x1_0000_0000_0000_0000'");
}

#[test]
fn missing_colon_after_rule_name() {
    let e = error(
        "\
r int_add(x, 0)
    => x
",
    );
    assert_at(&e, 1, 3);
    assert_eq!(e.expected, "':'");
    assert_eq!(e.found, "'int_add'");
}

#[test]
fn unclosed_cost_reason() {
    let e = error(
        "\
r: int_sub(0, x)
    cost \"int_neg is canonical
    => int_neg(x)
",
    );
    assert_at(&e, 2, 10);
    assert!(e.expected.contains("closing"), "{e}");
    assert_eq!(e.found, "'int_neg is canonical'");
}

#[test]
fn hash_inside_cost_reason() {
    // A '#' inside a quoted reason is text, not a comment.
    let file = load_text(
        "t.rules",
        "\
r: int_sub(0, x)
    cost \"int_neg is canonical, see #12\"
    => int_neg(x)
",
    );
    assert!(file.is_ok(), "{:?}", file.err());
}

// Whole files.

#[test]
fn correct_file_loads() {
    let file = load_text(
        "t.rules",
        "\
# Several rules using every kind of statement.
add_zero: int_add(x, 0)
    => x
reassoc: int_add(int_add(x, C1), C2)
    C = C1 + C2    # a comment after a statement
    => int_add(x, C)
pydiv_pow2: int_pydiv(x, C)
    check C > 0 and C & (C - 1) == 0
    shift = highest_bit(C)
    split C == 1 << k for k in 0..63
    => int_rshift(x, shift)
sub_from_zero: int_sub(0, x)
    cost \"int_neg is the canonical form of 0 - x\"
    priority 2
    => int_neg(x)
add_ovf_no_overflow: int_add_ovf(
        x,
        y)
    check x.add_cannot_overflow(y) and not x.is_constant()
    SORRY_SMT
    => int_add(x, y)
",
    )
    .unwrap_or_else(|es| {
        let shown: Vec<String> = es.iter().map(|e| e.to_string()).collect();
        panic!("the file should load:\n{}", shown.join("\n"))
    });
    let names: Vec<&str> = file.rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add_zero",
            "reassoc",
            "pydiv_pow2",
            "sub_from_zero",
            "add_ovf_no_overflow"
        ]
    );
    assert_eq!(file.scopes.len(), file.rules.len());
    let sub = &file.rules[3];
    assert_eq!(sub.priority, 2);
    assert_eq!(
        sub.cost_reason.as_deref(),
        Some("int_neg is the canonical form of 0 - x")
    );
    assert!(file.rules[4].sorry);
    assert!(file.scopes[2].contains_key("shift"));
}

#[test]
fn every_checker_error_is_reported_in_file_order() {
    let es = errors(
        "\
first: int_add(x, 0)
    check x.lower
    => y
second: int_mul(x)
    => int_add_ovf(x, x)
",
    );
    let places: Vec<(u32, u32, &str)> = es
        .iter()
        .map(|e| (e.line, e.col, e.expected.as_str()))
        .collect();
    assert_eq!(
        places,
        [
            (2, 11, "a truth value"),
            (3, 8, "a variable bound in the pattern or by an assignment"),
            (4, 9, "2 argument(s) for int_mul"),
            (5, 8, "an op without an overflow check"),
        ],
        "{es:#?}"
    );
}
