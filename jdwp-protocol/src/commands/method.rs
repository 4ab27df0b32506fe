//! `Method` (command set 6): a method's debug information — line numbers, local variables —
//! and its bytecode. Every command names the method by its declaring type and method ID.

use super::prelude::*;

jdwp_struct! {
    /// Where a source line starts: the first code index belonging to it.
    LineTableEntry { line_code_index: i64, line_number: i32 }
}

jdwp_struct! {
    /// A local variable (arguments and `this` included) and the code range where it is live:
    /// from `code_index` for `length` code units (both unsigned in the spec), in frame slot `slot`.
    VariableSlot { code_index: i64, name: String, signature: String, length: i32, slot: i32 }
}

jdwp_struct! {
    /// A [`VariableSlot`] with the variable type's generic signature (empty when it has none).
    GenericVariableSlot {
        code_index: i64,
        name: String,
        signature: String,
        generic_signature: String,
        length: i32,
        slot: i32,
    }
}

command_set! {
    Method = 6 {
        /// The method's code index range (`-1`, `-1` for native methods) and its line table,
        /// sorted by code index.
        LineTable = 1 {
            out LineTable { ref_type: ReferenceTypeId, method_id: MethodId }
            reply LineTableReply { start: i64, end: i64, lines: Vec<LineTableEntry> }
        }
        /// The method's local variables; `arg_cnt` counts argument words (longs and doubles take two).
        VariableTable = 2 {
            out VariableTable { ref_type: ReferenceTypeId, method_id: MethodId }
            reply VariableTableReply { arg_cnt: i32, slots: Vec<VariableSlot> }
        }
        /// The method's bytecode.
        Bytecodes = 3 {
            out Bytecodes { ref_type: ReferenceTypeId, method_id: MethodId }
            reply BytecodesReply { bytes: Vec<u8> }
        }
        /// Whether a class redefinition replaced this method with a different one.
        IsObsolete = 4 {
            out IsObsolete { ref_type: ReferenceTypeId, method_id: MethodId }
            reply IsObsoleteReply { is_obsolete: bool }
        }
        /// Like `VariableTable`, with each variable's generic signature.
        VariableTableWithGeneric = 5 {
            out VariableTableWithGeneric { ref_type: ReferenceTypeId, method_id: MethodId }
            reply VariableTableWithGenericReply { arg_cnt: i32, slots: Vec<GenericVariableSlot> }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_body, encode_body};

    #[test]
    fn native_line_table_round_trips() {
        let reply = LineTableReply { start: -1, end: -1, lines: vec![] };
        let bytes = encode_body(&reply, IdSizes::default());
        assert_eq!(bytes.len(), 8 + 8 + 4);
        assert_eq!(decode_body::<LineTableReply>(&bytes, IdSizes::default()), Ok(reply));
    }
}
