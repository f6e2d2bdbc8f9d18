//! What controllers remember between passes, kept in the cluster's state by type, so the state
//! needs to know nothing of the controllers (each controller owns its memory's type).

use std::any::{Any, TypeId};
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct Memory {
    slots: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Memory {
    /// The memory of type `T`, if its controller has kept one.
    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.slots.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// The memory of type `T`, made empty the first time it is asked for.
    pub(crate) fn get_mut<T: Any + Send + Sync + Default>(&mut self) -> &mut T {
        self.slots
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()))
            .downcast_mut()
            .expect("a slot holds the type it is keyed by")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_has_its_own_slot() {
        let mut memory = Memory::default();
        assert!(memory.get::<Vec<u8>>().is_none());
        memory.get_mut::<Vec<u8>>().push(7);
        *memory.get_mut::<u32>() += 2;
        assert_eq!(memory.get::<Vec<u8>>(), Some(&vec![7]));
        assert_eq!(memory.get::<u32>(), Some(&2));
    }
}
