//! Protobuf's wire format as Kubernetes writes it: varints, length-delimited bytes, fixed
//! 32- and 64-bit values, read field by field.

/// One field of a message: its number and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field<'a> {
    Varint(u64, u64),
    Bytes(u64, &'a [u8]),
    Fixed64(u64, u64),
    Fixed32(u64, u32),
}

impl Field<'_> {
    pub(crate) fn number(&self) -> u64 {
        match self {
            Field::Varint(n, _)
            | Field::Bytes(n, _)
            | Field::Fixed64(n, _)
            | Field::Fixed32(n, _) => *n,
        }
    }
}

pub(crate) fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn fixed<const N: usize>(bytes: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let end = at.checked_add(N).filter(|e| *e <= bytes.len())?;
    let value: [u8; N] = bytes[*at..end].try_into().ok()?;
    *at = end;
    Some(value)
}

/// The fields of a message in the order written, or None for bytes that are not one.
pub(crate) fn fields(bytes: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        let (number, wire) = (key >> 3, key & 7);
        out.push(match wire {
            0 => Field::Varint(number, varint(bytes, &mut at)?),
            1 => Field::Fixed64(number, u64::from_le_bytes(fixed::<8>(bytes, &mut at)?)),
            2 => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= bytes.len())?;
                let field = Field::Bytes(number, &bytes[at..end]);
                at = end;
                field
            }
            5 => Field::Fixed32(number, u32::from_le_bytes(fixed::<4>(bytes, &mut at)?)),
            _ => return None,
        });
    }
    Some(out)
}

/// The bytes of field `number`, when the message has it.
pub(crate) fn message(bytes: &[u8], number: u64) -> Option<&[u8]> {
    fields(bytes)?.into_iter().find_map(|f| match f {
        Field::Bytes(n, b) if n == number => Some(b),
        _ => None,
    })
}
