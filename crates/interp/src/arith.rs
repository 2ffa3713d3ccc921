//! Scalar semantics: the meaning of every op that computes a value from
//! its arguments alone (integer and float arithmetic, comparisons, casts,
//! copies, pointer comparison). No heap, no trace, no state, so the
//! optimizer can fold constants with it and the SMT encoding can be
//! cross-checked against it.
//!
//! Integers are 64-bit two's complement and wrap. Comparisons give 0 or 1;
//! `uint_*` compare as unsigned. Floats are IEEE doubles. Where PyPy's JIT
//! leaves a result undefined this module refuses (`Fault::Undefined`)
//! instead of picking a value:
//! - shift counts outside 0..=63 (`int_lshift`, `int_rshift`, `uint_rshift`,
//!   `load_effective_address`);
//! - `int_pydiv`/`int_pymod` by zero (`MININT // -1` is defined: it wraps
//!   to `MININT`, and `MININT % -1` is 0);
//! - `int_signext` to a byte count other than 1, 2, 4 or 8;
//! - `cast_float_to_int` of NaN or of a value whose truncation is outside
//!   the i64 range.
//!
//! Also assumed: `float_truediv` by zero gives IEEE infinities/NaN (the
//! Python-level check happens before the op); `cast_float_to_singlefloat`
//! rounds to nearest f32 and gives its 32 bits zero-extended;
//! `cast_singlefloat_to_float` reads the low 32 bits of its argument.

use crate::error::Fault;
use crate::value::Val;
use traceopt_ir::Opcode;

/// Evaluates a scalar op. Anything else is `Fault::Unsupported`; arguments
/// of the wrong number or type are `Fault::TypeMismatch`.
pub fn eval(op: Opcode, args: &[Val]) -> Result<Val, Fault> {
    use Opcode::*;
    let int = |k: usize| match args.get(k) {
        Some(Val::Int(x)) => Ok(*x),
        other => Err(wrong_arg(k, "an int", other)),
    };
    let float = |k: usize| match args.get(k) {
        Some(Val::Float(x)) => Ok(*x),
        other => Err(wrong_arg(k, "a float", other)),
    };
    let reference = |k: usize| match args.get(k) {
        Some(Val::Ref(r)) => Ok(*r),
        other => Err(wrong_arg(k, "a reference", other)),
    };
    Ok(match op {
        IntAdd | IntSub | IntMul | UintMulHigh | IntAnd | IntOr | IntXor | IntRshift
        | IntLshift | UintRshift | IntSignext | IntPydiv | IntPymod | IntLt | IntLe | IntEq
        | IntNe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe => {
            Val::Int(int_binary(op, int(0)?, int(1)?)?)
        }
        IntIsZero => Val::Int(i64::from(int(0)? == 0)),
        IntIsTrue => Val::Int(i64::from(int(0)? != 0)),
        IntNeg => Val::Int(int(0)?.wrapping_neg()),
        IntInvert => Val::Int(!int(0)?),
        IntForceGeZero => Val::Int(int(0)?.max(0)),
        SameAsI => Val::Int(int(0)?),
        FloatAdd => Val::Float(float(0)? + float(1)?),
        FloatSub => Val::Float(float(0)? - float(1)?),
        FloatMul => Val::Float(float(0)? * float(1)?),
        FloatTruediv => Val::Float(float(0)? / float(1)?),
        FloatLt | FloatLe | FloatEq | FloatNe | FloatGt | FloatGe => {
            let (a, b) = (float(0)?, float(1)?);
            let holds = match op {
                FloatLt => a < b,
                FloatLe => a <= b,
                FloatEq => a == b,
                FloatNe => a != b,
                FloatGt => a > b,
                _ => a >= b,
            };
            Val::Int(i64::from(holds))
        }
        FloatNeg => Val::Float(-float(0)?),
        FloatAbs => Val::Float(float(0)?.abs()),
        SameAsF => Val::Float(float(0)?),
        CastFloatToInt => Val::Int(float_to_int(float(0)?)?),
        CastIntToFloat => Val::Float(int(0)? as f64),
        CastFloatToSinglefloat => Val::Int(i64::from((float(0)? as f32).to_bits())),
        CastSinglefloatToFloat => Val::Float(f64::from(f32::from_bits(int(0)? as u32))),
        ConvertFloatBytesToLonglong => Val::Int(float(0)?.to_bits() as i64),
        ConvertLonglongBytesToFloat => Val::Float(f64::from_bits(int(0)? as u64)),
        SameAsR => Val::Ref(reference(0)?),
        PtrEq | InstancePtrEq => Val::Int(i64::from(reference(0)? == reference(1)?)),
        PtrNe | InstancePtrNe => Val::Int(i64::from(reference(0)? != reference(1)?)),
        LoadEffectiveAddress => {
            // base + (index << shift) + offset, arguments in PyPy's order
            // (base, index, offset, shift).
            let scaled = (int(1)? as u64) << shift_count(int(3)?)?;
            Val::Int(int(0)?.wrapping_add(scaled as i64).wrapping_add(int(2)?))
        }
        _ => return Err(Fault::Unsupported(format!("{op} is not a scalar op"))),
    })
}

/// Two-int ops, ints in and out.
pub fn int_binary(op: Opcode, a: i64, b: i64) -> Result<i64, Fault> {
    use Opcode::*;
    let (ua, ub) = (a as u64, b as u64);
    Ok(match op {
        IntAdd => a.wrapping_add(b),
        IntSub => a.wrapping_sub(b),
        IntMul => a.wrapping_mul(b),
        UintMulHigh => ((u128::from(ua) * u128::from(ub)) >> 64) as i64,
        IntAnd => a & b,
        IntOr => a | b,
        IntXor => a ^ b,
        IntLshift => (ua << shift_count(b)?) as i64,
        IntRshift => a >> shift_count(b)?,
        UintRshift => (ua >> shift_count(b)?) as i64,
        IntSignext => signext(a, b)?,
        IntPydiv => pydiv(a, b)?,
        IntPymod => pymod(a, b)?,
        IntLt => i64::from(a < b),
        IntLe => i64::from(a <= b),
        IntEq => i64::from(a == b),
        IntNe => i64::from(a != b),
        IntGt => i64::from(a > b),
        IntGe => i64::from(a >= b),
        UintLt => i64::from(ua < ub),
        UintLe => i64::from(ua <= ub),
        UintGt => i64::from(ua > ub),
        UintGe => i64::from(ua >= ub),
        _ => {
            return Err(Fault::Unsupported(format!(
                "{op} is not a binary integer operation"
            )))
        }
    })
}

/// `int_add_ovf`, `int_sub_ovf`, `int_mul_ovf`: the wrapped result and
/// whether the mathematical result does not fit in an i64. `None` for
/// other ops.
pub fn int_ovf(op: Opcode, a: i64, b: i64) -> Option<(i64, bool)> {
    match op {
        Opcode::IntAddOvf => Some(a.overflowing_add(b)),
        Opcode::IntSubOvf => Some(a.overflowing_sub(b)),
        Opcode::IntMulOvf => Some(a.overflowing_mul(b)),
        _ => None,
    }
}

/// Python's floor division: rounds toward negative infinity.
pub fn pydiv(a: i64, b: i64) -> Result<i64, Fault> {
    if b == 0 {
        return Err(Fault::Undefined(format!("division of {a} by zero")));
    }
    let q = a.wrapping_div(b);
    let r = a.wrapping_rem(b);
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        q.wrapping_sub(1)
    } else {
        q
    })
}

/// Python's modulo: the result has the sign of the divisor.
pub fn pymod(a: i64, b: i64) -> Result<i64, Fault> {
    if b == 0 {
        return Err(Fault::Undefined(format!("modulo of {a} by zero")));
    }
    let r = a.wrapping_rem(b);
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        r.wrapping_add(b)
    } else {
        r
    })
}

fn shift_count(count: i64) -> Result<u32, Fault> {
    if (0..=63).contains(&count) {
        Ok(count as u32)
    } else {
        Err(Fault::Undefined(format!(
            "shift count {count} is outside 0..=63"
        )))
    }
}

fn signext(value: i64, bytes: i64) -> Result<i64, Fault> {
    let bits = match bytes {
        1 | 2 | 4 | 8 => bytes as u32 * 8,
        _ => {
            return Err(Fault::Undefined(format!(
                "int_signext to {bytes} bytes (1, 2, 4 or 8 expected)"
            )))
        }
    };
    let unused = 64 - bits;
    Ok((value << unused) >> unused)
}

fn float_to_int(x: f64) -> Result<i64, Fault> {
    // -2^63 is exact as a double; 2^63 is the first value out of range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let t = x.trunc();
    if (-LIMIT..LIMIT).contains(&t) {
        Ok(t as i64)
    } else {
        Err(Fault::Undefined(format!(
            "cast_float_to_int of {x:?}, which has no i64 value"
        )))
    }
}

fn wrong_arg(k: usize, expected: &str, found: Option<&Val>) -> Fault {
    match found {
        Some(v) => Fault::TypeMismatch(format!(
            "argument {} should be {expected}, found {} {v}",
            k + 1,
            v.ty()
        )),
        None => Fault::TypeMismatch(format!("argument {} is missing", k + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Opcode::*;

    fn int(op: Opcode, a: i64, b: i64) -> Result<i64, Fault> {
        int_binary(op, a, b)
    }

    #[test]
    fn python_division_and_modulo() {
        assert_eq!(pydiv(7, -2), Ok(-4));
        assert_eq!(pymod(7, -2), Ok(-1));
        assert_eq!(pydiv(-7, 2), Ok(-4));
        assert_eq!(pymod(-7, 2), Ok(1));
        assert_eq!(pydiv(7, 2), Ok(3));
        assert_eq!(pymod(7, 2), Ok(1));
        assert_eq!(pydiv(-7, -2), Ok(3));
        assert_eq!(pymod(-7, -2), Ok(-1));
        assert_eq!(pydiv(6, -3), Ok(-2));
        assert_eq!(pymod(6, -3), Ok(0));
        assert_eq!(pydiv(i64::MIN, -1), Ok(i64::MIN));
        assert_eq!(pymod(i64::MIN, -1), Ok(0));
        assert!(matches!(pydiv(1, 0), Err(Fault::Undefined(_))));
        assert!(matches!(pymod(1, 0), Err(Fault::Undefined(_))));
    }

    #[test]
    fn shifts_refuse_counts_outside_0_to_63() {
        assert_eq!(int(IntLshift, 1, 63), Ok(i64::MIN));
        assert_eq!(int(IntRshift, -16, 2), Ok(-4));
        assert_eq!(int(UintRshift, -16, 60), Ok(0xf));
        assert_eq!(int(IntRshift, i64::MIN, 63), Ok(-1));
        for op in [IntLshift, IntRshift, UintRshift] {
            for count in [64, -1, i64::MIN, i64::MAX] {
                assert!(
                    matches!(int(op, 1, count), Err(Fault::Undefined(_))),
                    "{op} {count}"
                );
            }
        }
    }

    #[test]
    fn unsigned_comparisons_and_high_product() {
        assert_eq!(int(UintLt, -1, 1), Ok(0));
        assert_eq!(int(IntLt, -1, 1), Ok(1));
        assert_eq!(int(UintGe, -86, -6), Ok(0));
        assert_eq!(int(UintGt, i64::MIN, i64::MAX), Ok(1));
        assert_eq!(int(UintLe, 0, -1), Ok(1));
        assert_eq!(int(UintMulHigh, -1, -1), Ok(-2)); // (2^64-1)^2 >> 64 = 2^64-2
        assert_eq!(int(UintMulHigh, 1 << 32, 1 << 32), Ok(1));
        assert_eq!(int(UintMulHigh, 3, 5), Ok(0));
    }

    #[test]
    fn signext() {
        assert_eq!(int(IntSignext, 0xff, 1), Ok(-1));
        assert_eq!(int(IntSignext, 0x7f, 1), Ok(0x7f));
        assert_eq!(int(IntSignext, 0x1_8000, 2), Ok(-0x8000));
        assert_eq!(int(IntSignext, 0xffff_ffff, 4), Ok(-1));
        assert_eq!(int(IntSignext, -5, 8), Ok(-5));
        for bytes in [0, 3, 16, -1] {
            assert!(matches!(
                int(IntSignext, 1, bytes),
                Err(Fault::Undefined(_))
            ));
        }
    }

    #[test]
    fn overflow_flag() {
        assert_eq!(int_ovf(IntAddOvf, i64::MAX, 1), Some((i64::MIN, true)));
        assert_eq!(int_ovf(IntAddOvf, -95, 9), Some((-86, false)));
        assert_eq!(int_ovf(IntSubOvf, i64::MIN, 1), Some((i64::MAX, true)));
        assert_eq!(int_ovf(IntMulOvf, 34, 27), Some((918, false)));
        assert_eq!(int_ovf(IntMulOvf, i64::MIN, -1), Some((i64::MIN, true)));
        assert_eq!(int_ovf(IntMulOvf, 1 << 32, 1 << 31), Some((i64::MIN, true)));
        assert_eq!(int_ovf(IntAdd, 1, 1), None);
    }

    #[test]
    fn unary_and_wrapping() {
        assert_eq!(eval(IntNeg, &[Val::Int(i64::MIN)]), Ok(Val::Int(i64::MIN)));
        assert_eq!(eval(IntInvert, &[Val::Int(0)]), Ok(Val::Int(-1)));
        assert_eq!(eval(IntForceGeZero, &[Val::Int(-3)]), Ok(Val::Int(0)));
        assert_eq!(eval(IntForceGeZero, &[Val::Int(3)]), Ok(Val::Int(3)));
        assert_eq!(eval(IntIsTrue, &[Val::Int(-3)]), Ok(Val::Int(1)));
        assert_eq!(eval(IntIsZero, &[Val::Int(-3)]), Ok(Val::Int(0)));
        assert_eq!(int(IntMul, i64::MAX, 2), Ok(-2));
    }

    #[test]
    fn floats_and_casts() {
        let f = |op, args: &[Val]| eval(op, args);
        assert_eq!(
            f(FloatTruediv, &[1.0.into(), 0.0.into()]),
            Ok(Val::Float(f64::INFINITY))
        );
        assert_eq!(f(FloatLt, &[f64::NAN.into(), 1.0.into()]), Ok(Val::Int(0)));
        assert_eq!(
            f(FloatNe, &[f64::NAN.into(), f64::NAN.into()]),
            Ok(Val::Int(1))
        );
        assert_eq!(f(FloatAbs, &[(-2.5).into()]), Ok(Val::Float(2.5)));
        assert_eq!(f(CastFloatToInt, &[(-2.9).into()]), Ok(Val::Int(-2)));
        let two63 = 2f64.powi(63);
        assert_eq!(
            f(CastFloatToInt, &[(-two63).into()]),
            Ok(Val::Int(i64::MIN))
        );
        assert_eq!(
            f(CastFloatToInt, &[(two63 - 1024.0).into()]),
            Ok(Val::Int(i64::MAX - 1023))
        );
        for bad in [f64::NAN, two63, f64::NEG_INFINITY, -two63 - 2048.0] {
            assert!(matches!(
                f(CastFloatToInt, &[bad.into()]),
                Err(Fault::Undefined(_))
            ));
        }
        assert_eq!(f(CastIntToFloat, &[Val::Int(-3)]), Ok(Val::Float(-3.0)));
        assert_eq!(
            f(ConvertFloatBytesToLonglong, &[1.0.into()]),
            Ok(Val::Int(0x3ff0_0000_0000_0000))
        );
        assert_eq!(
            f(
                ConvertLonglongBytesToFloat,
                &[Val::Int(0x4000_0000_0000_0000)]
            ),
            Ok(Val::Float(2.0))
        );
        assert_eq!(
            f(CastFloatToSinglefloat, &[1.0.into()]),
            Ok(Val::Int(0x3f80_0000))
        );
        assert_eq!(
            f(CastSinglefloatToFloat, &[Val::Int(0x3fc0_0000)]),
            Ok(Val::Float(1.5))
        );
    }

    #[test]
    fn wrong_arguments_are_faults() {
        assert!(matches!(
            eval(IntAdd, &[Val::Int(1)]),
            Err(Fault::TypeMismatch(_))
        ));
        assert!(matches!(
            eval(IntAdd, &[Val::Int(1), Val::Float(1.0)]),
            Err(Fault::TypeMismatch(_))
        ));
        assert!(matches!(
            eval(PtrEq, &[Val::NULL, Val::Int(0)]),
            Err(Fault::TypeMismatch(_))
        ));
        assert!(matches!(
            eval(GuardTrue, &[Val::Int(1)]),
            Err(Fault::Unsupported(_))
        ));
    }

    #[test]
    fn load_effective_address() {
        let args = [Val::Int(1000), Val::Int(3), Val::Int(16), Val::Int(3)];
        assert_eq!(
            eval(LoadEffectiveAddress, &args),
            Ok(Val::Int(1000 + 24 + 16))
        );
        let bad = [Val::Int(1000), Val::Int(3), Val::Int(16), Val::Int(64)];
        assert!(matches!(
            eval(LoadEffectiveAddress, &bad),
            Err(Fault::Undefined(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn pydiv_and_pymod_agree(a: i64, b: i64) {
            proptest::prop_assume!(b != 0);
            let (q, r) = (pydiv(a, b).unwrap(), pymod(a, b).unwrap());
            proptest::prop_assert_eq!(q.wrapping_mul(b).wrapping_add(r), a);
            proptest::prop_assert!(r == 0 || (r < 0) == (b < 0));
            proptest::prop_assert!(r.unsigned_abs() < b.unsigned_abs());
        }

        #[test]
        fn ovf_flag_matches_wide_arithmetic(a: i64, b: i64) {
            for (op, wide) in [
                (IntAddOvf, i128::from(a) + i128::from(b)),
                (IntSubOvf, i128::from(a) - i128::from(b)),
                (IntMulOvf, i128::from(a) * i128::from(b)),
            ] {
                let (value, ovf) = int_ovf(op, a, b).unwrap();
                proptest::prop_assert_eq!(value, wide as i64);
                proptest::prop_assert_eq!(ovf, i64::try_from(wide).is_err());
            }
        }
    }
}
