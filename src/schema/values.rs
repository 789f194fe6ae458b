//! JSON values as JSON Schema compares them: numbers by value (`1` equals
//! `1.0`, large integers exactly), objects regardless of key order.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Number, Value};

/// Numbers by value (`1` and `1.0` are one number), exactly for integers.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_integer(a), as_integer(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn as_integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Exact for integers; for fractions, within a relative 1e-9 of a whole
/// quotient, so that `0.3` is a multiple of `0.1` despite binary floats.
pub(super) fn is_multiple(n: &Number, divisor: &Number) -> bool {
    if let (Some(n), Some(d)) = (as_integer(n), as_integer(divisor)) {
        return d != 0 && n % d == 0;
    }
    let (Some(n), Some(d)) = (n.as_f64(), divisor.as_f64()) else {
        return false;
    };
    let quotient = n / d;
    quotient.is_finite() && (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// JSON Schema equality: numbers by value, objects regardless of key order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

/// The first repeated item of a list: `(first index, repeat index)`.
/// Short lists compare pairwise (no allocation); long ones hash a canonical
/// text of each item, so the cost stays linear.
pub(super) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    const PAIRWISE_UP_TO: usize = 16;
    if items.len() <= PAIRWISE_UP_TO {
        return (1..items.len()).find_map(|i| {
            (0..i)
                .find(|&j| equal(&items[j], &items[i]))
                .map(|j| (j, i))
        });
    }
    let mut first_seen: HashMap<String, usize> = HashMap::with_capacity(items.len());
    items.iter().enumerate().find_map(|(i, item)| {
        let first = *first_seen.entry(canonical(item)).or_insert(i);
        (first != i).then_some((first, i))
    })
}

/// A text that is the same for exactly the values [`equal`] calls equal,
/// so `uniqueItems` is one hash lookup per item instead of a pairwise scan.
fn canonical(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Number(n) => match (as_integer(n), n.as_f64()) {
                (Some(i), _) => out.push_str(&i.to_string()),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e18 => {
                    out.push_str(&format!("{f:.0}"));
                }
                _ => out.push_str(&n.to_string()),
            },
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    write(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by_key(|(key, _)| *key);
                out.push('{');
                for (key, item) in entries {
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    write(item, out);
                    out.push(',');
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}
