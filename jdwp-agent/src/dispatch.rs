//! The command dispatch table: (command set, command) → handler, with decoding and encoding done
//! once here so handlers see typed commands and return typed replies.

use jdwp_protocol::codec::{Reader, UntaggedTypes, encode_body};
use jdwp_protocol::{Command, DecodeError, ErrorCode, IdSizes};

/// What decoding needs from the agent: the ID sizes it announced and the types of untagged values.
pub trait DecodeContext {
    fn id_sizes(&self) -> IdSizes;
    fn untagged_types(&self) -> &dyn UntaggedTypes;
}

/// A handler as the table stores it: raw body in, raw reply body out.
pub type RawHandler<Ctx> = fn(&Ctx, &[u8]) -> Result<Vec<u8>, ErrorCode>;

/// One entry of the table.
pub struct Entry<Ctx: 'static> {
    pub set: u8,
    pub cmd: u8,
    pub name: &'static str,
    pub handler: RawHandler<Ctx>,
}

/// The JDWP error for a body that does not decode.
pub fn decode_error_code(e: &DecodeError) -> ErrorCode {
    match e {
        DecodeError::InvalidTag { what: "value", .. } | DecodeError::InvalidTag { what: "array region", .. } => {
            ErrorCode::INVALID_TAG
        }
        DecodeError::InvalidTag { what: "event kind", .. } => ErrorCode::INVALID_EVENT_TYPE,
        DecodeError::UnknownUntaggedType("array element") => ErrorCode::INVALID_ARRAY,
        DecodeError::UnknownUntaggedType(_) => ErrorCode::INVALID_FIELDID,
        _ => ErrorCode::ILLEGAL_ARGUMENT,
    }
}

/// Decodes a `C`, runs `handler`, encodes its reply.
pub fn run<Ctx: DecodeContext, C: Command>(
    ctx: &Ctx,
    body: &[u8],
    handler: fn(&Ctx, C) -> Result<C::Reply, ErrorCode>,
) -> Result<Vec<u8>, ErrorCode> {
    let sizes = ctx.id_sizes();
    let mut reader = Reader::with_untagged_types(body, sizes, ctx.untagged_types());
    let command = C::decode(&mut reader).and_then(|c| reader.finish().map(|()| c)).map_err(|e| {
        tracing::debug!(command = C::QUALIFIED_NAME, error = %e, "malformed command body");
        decode_error_code(&e)
    })?;
    let reply = handler(ctx, command)?;
    Ok(encode_body(&reply, sizes))
}

/// Finds the entry for a command; `None` means `NOT_IMPLEMENTED`.
pub fn lookup<Ctx>(table: &'static [Entry<Ctx>], set: u8, cmd: u8) -> Option<&'static Entry<Ctx>> {
    table.iter().find(|e| e.set == set && e.cmd == cmd)
}

/// Builds a dispatch table: `dispatch_table!(Ctx; vm::Version => handlers::version, ...)`.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_table {
    ($ctx:ty; $($command:path => $handler:path),* $(,)?) => {
        &[$(
            {
                fn raw(ctx: &$ctx, body: &[u8]) -> Result<Vec<u8>, jdwp_protocol::ErrorCode> {
                    $crate::dispatch::run::<$ctx, $command>(ctx, body, $handler)
                }
                $crate::dispatch::Entry {
                    set: <$command as jdwp_protocol::Command>::SET,
                    cmd: <$command as jdwp_protocol::Command>::CMD,
                    name: <$command as jdwp_protocol::Command>::QUALIFIED_NAME,
                    handler: raw,
                }
            }
        ),*]
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::commands::{array_reference as ar, thread_reference as tr, virtual_machine as vm};
    use jdwp_protocol::{ArrayId, FieldId, Tag, ThreadId, Value};

    struct Ctx;

    impl UntaggedTypes for Ctx {
        fn field_tag(&self, _: FieldId) -> Option<Tag> {
            None
        }
        fn array_component_tag(&self, array: ArrayId) -> Option<Tag> {
            (array == ArrayId(1)).then_some(Tag::Int)
        }
    }

    impl DecodeContext for Ctx {
        fn id_sizes(&self) -> IdSizes {
            IdSizes::default()
        }
        fn untagged_types(&self) -> &dyn UntaggedTypes {
            self
        }
    }

    fn name(_: &Ctx, cmd: tr::Name) -> Result<tr::NameReply, ErrorCode> {
        if cmd.thread == ThreadId(0) {
            Err(ErrorCode::INVALID_THREAD)
        } else {
            Ok(tr::NameReply { thread_name: "main".into() })
        }
    }

    fn set_values(_: &Ctx, cmd: ar::SetValues) -> Result<ar::SetValuesReply, ErrorCode> {
        assert_eq!(cmd.values, [Value::Int(5)]);
        Ok(ar::SetValuesReply {})
    }

    fn exit(_: &Ctx, _: vm::Exit) -> Result<vm::ExitReply, ErrorCode> {
        Ok(vm::ExitReply {})
    }

    static TABLE: &[Entry<Ctx>] = dispatch_table!(Ctx;
        tr::Name => name,
        ar::SetValues => set_values,
        vm::Exit => exit,
    );

    fn call(set: u8, cmd: u8, body: &[u8]) -> Result<Vec<u8>, ErrorCode> {
        match lookup(TABLE, set, cmd) {
            Some(entry) => (entry.handler)(&Ctx, body),
            None => Err(ErrorCode::NOT_IMPLEMENTED),
        }
    }

    #[test]
    fn typed_handlers_are_reached_by_number() {
        let body = encode_body(&tr::Name { thread: ThreadId(3) }, IdSizes::default());
        let reply = call(11, 1, &body).unwrap();
        assert_eq!(
            jdwp_protocol::codec::decode_body::<tr::NameReply>(&reply, IdSizes::default()).unwrap().thread_name,
            "main"
        );
        let null = encode_body(&tr::Name { thread: ThreadId(0) }, IdSizes::default());
        assert_eq!(call(11, 1, &null), Err(ErrorCode::INVALID_THREAD));
        assert_eq!(call(11, 99, &body), Err(ErrorCode::NOT_IMPLEMENTED));
        assert_eq!(lookup(TABLE, 1, 10).unwrap().name, "VirtualMachine.Exit");
    }

    #[test]
    fn malformed_bodies_get_error_codes() {
        assert_eq!(call(11, 1, &[0, 1]), Err(ErrorCode::ILLEGAL_ARGUMENT));
        let mut body = encode_body(&tr::Name { thread: ThreadId(3) }, IdSizes::default());
        body.push(0);
        assert_eq!(call(11, 1, &body), Err(ErrorCode::ILLEGAL_ARGUMENT), "trailing bytes");
        // Untagged array values decode with the agent's knowledge of the array's component type.
        let ok = encode_body(
            &ar::SetValues { array_object: ArrayId(1), first_index: 0, values: vec![Value::Int(5)] },
            IdSizes::default(),
        );
        assert!(call(13, 3, &ok).is_ok());
        let unknown = encode_body(
            &ar::SetValues { array_object: ArrayId(2), first_index: 0, values: vec![Value::Int(5)] },
            IdSizes::default(),
        );
        assert_eq!(call(13, 3, &unknown), Err(ErrorCode::INVALID_ARRAY));
    }
}
