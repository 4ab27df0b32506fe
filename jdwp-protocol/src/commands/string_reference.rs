//! `StringReference` (command set 10): reading the characters of a `java.lang.String`.

use super::prelude::*;

command_set! {
    StringReference = 10 {
        /// The string's contents. The command struct is `ValueCmd` so it does not shadow the
        /// tagged [`crate::value::Value`].
        Value = 1 {
            out ValueCmd { string_object: ObjectId }
            reply ValueReply { string_value: String }
        }
    }
}
