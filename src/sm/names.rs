//! Names of the enumerations in seed 002 (UpdateType, NetObjType, controller types).

/// UpdateType (3 bits). The seed calls this list exhaustive.
pub fn update_type_name(t: u8) -> Option<&'static str> {
    match t {
        1 => Some("create"),
        2 => Some("p"),
        3 => Some("update"),
        5 => Some("remove"),
        _ => None,
    }
}

/// NetObjType (5 bits). Values above 14 are invalid.
pub fn object_type_name(t: u8) -> Option<&'static str> {
    const NAMES: [&str; 15] = [
        "rigid_body",
        "child_shape",
        "joint",
        "controller",
        "container",
        "harvestable",
        "character",
        "lift",
        "tool",
        "portal",
        "path_node",
        "unit",
        "voxel_terrain_cell",
        "scriptable_object",
        "shape_group",
    ];
    NAMES.get(t as usize).copied()
}

/// Highest valid NetObjType.
pub const MAX_OBJECT_TYPE: u8 = 14;

/// What a controller type means for an object type, where the seed says.
pub fn controller_name(object_type: u8, controller: u8) -> Option<&'static str> {
    match (object_type, controller) {
        (0, 1) => Some("static"),
        (0, 2) => Some("dynamic"),
        (1, 31) => Some("block"),
        (1, 32) => Some("part"),
        (2, 2) => Some("bearing"),
        (2, 3) => Some("spring"),
        (2, 4) => Some("survival_spring"),
        (2, 28) => Some("piston"),
        (2, 41) => Some("generic_rotational"),
        _ => None,
    }
}

/// `update_container` → `UpdateContainer` (the seed's names, for people).
pub fn pascal(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for part in snake.split('_') {
        let mut c = part.chars();
        if let Some(first) = c.next() {
            out.extend(first.to_uppercase());
            out.push_str(c.as_str());
        }
    }
    out
}

/// Local Rotation axis after subtracting 4 from the 4-bit wire value.
pub fn axis_name(value: i8) -> Option<&'static str> {
    match value {
        -3 => Some("-z"),
        -2 => Some("-y"),
        -1 => Some("-x"),
        1 => Some("+x"),
        2 => Some("+y"),
        3 => Some("+z"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(pascal("update_container"), "UpdateContainer");
        assert_eq!(object_type_name(14), Some("shape_group"));
        assert_eq!(object_type_name(15), None);
        assert_eq!(update_type_name(4), None);
        assert_eq!(axis_name(0), None);
        assert_eq!(axis_name(-3), Some("-z"));
    }
}
