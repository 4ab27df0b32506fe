//! `ReferenceType` (command set 2): questions about a loaded class, interface or array type —
//! its names, members, static field values, source information and class file data.

use super::prelude::*;

jdwp_struct! {
    /// A field declared by a type, as `Fields` lists it.
    FieldInfo { field_id: FieldId, name: String, signature: String, mod_bits: i32 }
}

jdwp_struct! {
    /// A method declared by a type, as `Methods` lists it.
    MethodInfo { method_id: MethodId, name: String, signature: String, mod_bits: i32 }
}

jdwp_struct! {
    /// A declared field with its generic signature (empty when it has none).
    GenericFieldInfo { field_id: FieldId, name: String, signature: String, generic_signature: String, mod_bits: i32 }
}

jdwp_struct! {
    /// A declared method with its generic signature (empty when it has none).
    GenericMethodInfo {
        method_id: MethodId,
        name: String,
        signature: String,
        generic_signature: String,
        mod_bits: i32,
    }
}

jdwp_struct! {
    /// A class or interface declared directly inside another type, with its kind.
    NestedTypeInfo { ref_type_tag: TypeTag, type_id: ReferenceTypeId }
}

command_set! {
    ReferenceType = 2 {
        /// The type's JNI signature (`Ljava/lang/String;`, `[I`...).
        Signature = 1 {
            out Signature { ref_type: ReferenceTypeId }
            reply SignatureReply { signature: String }
        }
        /// The loader that defined the type; null for the bootstrap loader.
        ClassLoader = 2 {
            out ClassLoader { ref_type: ReferenceTypeId }
            reply ClassLoaderReply { class_loader: ClassLoaderId }
        }
        /// The type's access flags (meaningless for arrays and primitive classes).
        Modifiers = 3 {
            out Modifiers { ref_type: ReferenceTypeId }
            reply ModifiersReply { mod_bits: i32 }
        }
        /// The fields the type itself declares, in class file order, synthetic ones included.
        Fields = 4 {
            out Fields { ref_type: ReferenceTypeId }
            reply FieldsReply { declared: Vec<FieldInfo> }
        }
        /// The methods the type itself declares, in class file order, constructors and
        /// `<clinit>` included.
        Methods = 5 {
            out Methods { ref_type: ReferenceTypeId }
            reply MethodsReply { declared: Vec<MethodInfo> }
        }
        /// Values of static fields of the type or its supertypes, one per requested field, in order.
        GetValues = 6 {
            out GetValues { ref_type: ReferenceTypeId, fields: Vec<FieldId> }
            reply GetValuesReply { values: Vec<Value> }
        }
        /// The bare source file name (no directory) the type was compiled from.
        SourceFile = 7 {
            out SourceFile { ref_type: ReferenceTypeId }
            reply SourceFileReply { source_file: String }
        }
        /// Classes and interfaces declared directly inside the type (one level only).
        NestedTypes = 8 {
            out NestedTypes { ref_type: ReferenceTypeId }
            reply NestedTypesReply { classes: Vec<NestedTypeInfo> }
        }
        /// How far the type got through loading (`class_status` bits).
        Status = 9 {
            out Status { ref_type: ReferenceTypeId }
            reply StatusReply { status: i32 }
        }
        /// The interfaces a class names in its own declaration (not inherited ones).
        Interfaces = 10 {
            out Interfaces { ref_type: ReferenceTypeId }
            reply InterfacesReply { interfaces: Vec<InterfaceId> }
        }
        /// The `java.lang.Class` instance that stands for the type.
        ClassObject = 11 {
            out ClassObject { ref_type: ReferenceTypeId }
            reply ClassObjectReply { class_object: ClassObjectId }
        }
        /// The type's `SourceDebugExtension` attribute (SMAP text), when it has one.
        SourceDebugExtension = 12 {
            out SourceDebugExtension { ref_type: ReferenceTypeId }
            reply SourceDebugExtensionReply { extension: String }
        }
        /// The JNI signature plus the generic signature (empty when there is none).
        SignatureWithGeneric = 13 {
            out SignatureWithGeneric { ref_type: ReferenceTypeId }
            reply SignatureWithGenericReply { signature: String, generic_signature: String }
        }
        /// Like `Fields`, with each field's generic signature.
        FieldsWithGeneric = 14 {
            out FieldsWithGeneric { ref_type: ReferenceTypeId }
            reply FieldsWithGenericReply { declared: Vec<GenericFieldInfo> }
        }
        /// Like `Methods`, with each method's generic signature.
        MethodsWithGeneric = 15 {
            out MethodsWithGeneric { ref_type: ReferenceTypeId }
            reply MethodsWithGenericReply { declared: Vec<GenericMethodInfo> }
        }
        /// Reachable instances of the type, at most `max_instances` of them (0: no limit).
        Instances = 16 {
            out Instances { ref_type: ReferenceTypeId, max_instances: i32 }
            reply InstancesReply { instances: Vec<TaggedObjectId> }
        }
        /// The major and minor version of the type's class file.
        ClassFileVersion = 17 {
            out ClassFileVersion { ref_type: ReferenceTypeId }
            reply ClassFileVersionReply { major_version: i32, minor_version: i32 }
        }
        /// The raw `constant_pool` bytes of the class file and its `constant_pool_count`.
        ConstantPool = 18 {
            out ConstantPool { ref_type: ReferenceTypeId }
            reply ConstantPoolReply { count: i32, bytes: Vec<u8> }
        }
        /// The module the type belongs to.
        Module = 19 {
            out Module { ref_type: ReferenceTypeId }
            reply ModuleReply { module: ModuleId }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_body, encode_body};

    #[test]
    fn nested_types_reply_has_tag_then_id() {
        let sizes = IdSizes { reference_type_id: 2, ..IdSizes::default() };
        let reply = NestedTypesReply {
            classes: vec![NestedTypeInfo { ref_type_tag: TypeTag::Interface, type_id: ReferenceTypeId(0x0102) }],
        };
        let bytes = encode_body(&reply, sizes);
        assert_eq!(bytes, [0, 0, 0, 1, 2, 1, 2]);
        assert_eq!(decode_body::<NestedTypesReply>(&bytes, sizes), Ok(reply));
    }

    #[test]
    fn constant_pool_reply_is_count_then_byte_array() {
        let reply = ConstantPoolReply { count: 3, bytes: vec![0xca, 0xfe] };
        let bytes = encode_body(&reply, IdSizes::default());
        assert_eq!(bytes, [0, 0, 0, 3, 0, 0, 0, 2, 0xca, 0xfe]);
    }
}
