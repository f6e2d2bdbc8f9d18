//! Rhai's builtins that take a size (`pad` on strings, arrays and BLOBs, `blob(len)`), checked
//! against the memory guard before they allocate. The guard looks between operations; one of
//! these builtins asked for billions of items would otherwise allocate past it (or loop for
//! minutes, deaf to Ctrl-C) inside a single call. Registered in the global namespace, so they
//! take the place of the standard package's versions, and then do the same work.

use rhai::{Array, Blob, Dynamic, Engine, EvalAltResult, ImmutableString, NativeCallContext};

use crate::script::error::usage_error;
use crate::script::memory::{MAX_DATA_BYTES, large_bytes};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn register(engine: &mut Engine) {
    engine
        .register_fn("pad", pad_array)
        .register_fn("pad", pad_string_char)
        .register_fn("pad", pad_string)
        .register_fn("pad", pad_blob)
        .register_fn("blob", blob_of)
        .register_fn("blob", blob_filled);
}

/// Refuses a growth of `bytes` that would take the script's data past the limit, naming the
/// call, what it asked for and the limit.
fn room_for(ctx: &NativeCallContext, call: &str, asked: &str, bytes: u128) -> Result<()> {
    let held = large_bytes() as u128;
    if held + bytes <= MAX_DATA_BYTES as u128 {
        return Ok(());
    }
    Err(usage_error(
        format!(
            "memory limit: {call} asked for {asked} (about {}), past the runbook's {} MiB memory limit (its data holds {} now); nothing was allocated",
            size(bytes),
            MAX_DATA_BYTES >> 20,
            size(held)
        ),
        ctx.call_position(),
    ))
}

fn size(bytes: u128) -> String {
    const MIB: u128 = 1 << 20;
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{} MiB", bytes.div_ceil(MIB))
    }
}

/// How many items a growth to `len` from `have` adds (0 when it shrinks nothing).
fn added(len: rhai::INT, have: usize) -> u128 {
    u128::try_from(len)
        .unwrap_or(0)
        .saturating_sub(have as u128)
}

/// The bytes one more copy of `item` holds beyond its slot: strings are shared, not copied;
/// arrays, maps and BLOBs are copied whole.
fn copy_cost(item: &Dynamic) -> u128 {
    let slot = std::mem::size_of::<Dynamic>() as u128;
    if let Some(array) = item.read_lock::<Array>() {
        return array.iter().map(|v| slot + copy_cost(v)).sum();
    }
    if let Some(map) = item.read_lock::<rhai::Map>() {
        // A map entry: its key, its value's slot and the tree's node share.
        return map
            .iter()
            .map(|(k, v)| k.len() as u128 + 2 * slot + copy_cost(v))
            .sum();
    }
    if let Some(blob) = item.read_lock::<Blob>() {
        return blob.len() as u128;
    }
    0
}

fn pad_array(
    ctx: NativeCallContext,
    array: &mut Array,
    len: rhai::INT,
    item: Dynamic,
) -> Result<()> {
    let more = added(len, array.len());
    if more == 0 {
        return Ok(());
    }
    let each = std::mem::size_of::<Dynamic>() as u128 + copy_cost(&item);
    room_for(
        &ctx,
        "pad",
        &format!("an array of {len} items"),
        more * each,
    )?;
    array.resize(array.len() + more as usize, item);
    Ok(())
}

fn pad_string_char(
    ctx: NativeCallContext,
    string: &mut ImmutableString,
    len: rhai::INT,
    character: char,
) -> Result<()> {
    let more = added(len, string.chars().count());
    if more == 0 {
        return Ok(());
    }
    room_for(
        &ctx,
        "pad",
        &format!("a string of {len} characters"),
        more * character.len_utf8() as u128,
    )?;
    string
        .make_mut()
        .extend(std::iter::repeat_n(character, more as usize));
    Ok(())
}

fn pad_string(
    ctx: NativeCallContext,
    string: &mut ImmutableString,
    len: rhai::INT,
    padding: &str,
) -> Result<()> {
    let have = string.chars().count();
    let more = added(len, have);
    let padding_chars = padding.chars().count();
    if more == 0 || padding_chars == 0 {
        return Ok(());
    }
    let bytes = more * padding.len() as u128 / padding_chars as u128;
    room_for(&ctx, "pad", &format!("a string of {len} characters"), bytes)?;
    // Whole copies of the padding, then as much of it as still fits, as Rhai's pad does.
    let more = more as usize;
    let text = string.make_mut();
    for _ in 0..more / padding_chars {
        text.push_str(padding);
    }
    text.extend(padding.chars().take(more % padding_chars));
    Ok(())
}

fn pad_blob(
    ctx: NativeCallContext,
    blob: &mut Blob,
    len: rhai::INT,
    value: rhai::INT,
) -> Result<()> {
    let more = added(len, blob.len());
    if more == 0 {
        return Ok(());
    }
    room_for(&ctx, "pad", &format!("a BLOB of {len} bytes"), more)?;
    blob.resize(blob.len() + more as usize, byte(value));
    Ok(())
}

fn blob_of(ctx: NativeCallContext, len: rhai::INT) -> Result<Blob> {
    blob_filled(ctx, len, 0)
}

fn blob_filled(ctx: NativeCallContext, len: rhai::INT, value: rhai::INT) -> Result<Blob> {
    let len = added(len, 0);
    room_for(&ctx, "blob", &format!("{len} bytes"), len)?;
    Ok(vec![byte(value); len as usize])
}

/// The low byte of an integer, as Rhai's BLOB functions take it.
fn byte(value: rhai::INT) -> u8 {
    (value & 0xff) as u8
}
