//! The declarative macros that turn the protocol's layout tables into types and codecs.
//!
//! A layout is written once, as a list of fields in wire order; the macros derive the struct, its
//! encoder, its decoder, a random sample generator (tests) and the command table entry. Nothing
//! else in the workspace writes JDWP bytes by hand except the few layouts marked as hand-written
//! (a `;` instead of a field list), whose shape depends on data (untagged values).

/// Declares a struct whose wire layout is its fields in order.
#[macro_export]
#[doc(hidden)]
macro_rules! jdwp_struct {
    ($(#[$meta:meta])* $name:ident ;) => {};
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $crate::codec::JdwpCodec for $name {
            #[allow(unused_variables)]
            fn encode(&self, w: &mut $crate::codec::Writer) {
                $($crate::codec::JdwpCodec::encode(&self.$field, w);)*
            }
            #[allow(unused_variables)]
            fn decode(r: &mut $crate::codec::Reader<'_>) -> Result<Self, $crate::codec::DecodeError> {
                Ok($name { $($field: <$ty as $crate::codec::JdwpCodec>::decode(r)?,)* })
            }
            const MIN_SIZE: usize = 0 $(+ <$ty as $crate::codec::JdwpCodec>::MIN_SIZE)*;
        }

        #[cfg(any(test, feature = "sample"))]
        impl $crate::sample::Sample for $name {
            #[allow(unused_variables)]
            fn sample(g: &mut $crate::sample::Gen) -> Self {
                $name { $($field: $crate::sample::Sample::sample(g),)* }
            }
        }
    };
}

/// Declares an enum selected by a leading tag of a constant set (`Select` in the spec's terms):
/// each variant is named like the tag's variant and lists its fields in wire order.
#[macro_export]
#[doc(hidden)]
macro_rules! jdwp_select {
    ($(#[$meta:meta])* $name:ident by $kind:ident {
        $($(#[$vmeta:meta])* $variant:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $($(#[$vmeta])* $variant { $($(#[$fmeta])* $field: $ty,)* },)*
        }

        impl $name {
            /// The tag this alternative is sent with.
            pub fn kind(&self) -> $kind {
                match self { $($name::$variant { .. } => $kind::$variant,)* }
            }
        }

        impl $crate::codec::JdwpCodec for $name {
            fn encode(&self, w: &mut $crate::codec::Writer) {
                $crate::codec::JdwpCodec::encode(&self.kind(), w);
                match self {
                    $($name::$variant { $($field),* } => { $($crate::codec::JdwpCodec::encode($field, w);)* })*
                }
            }
            fn decode(r: &mut $crate::codec::Reader<'_>) -> Result<Self, $crate::codec::DecodeError> {
                let kind = <$kind as $crate::codec::JdwpCodec>::decode(r)?;
                match kind {
                    $($kind::$variant => Ok($name::$variant { $($field: <$ty as $crate::codec::JdwpCodec>::decode(r)?,)* }),)*
                    #[allow(unreachable_patterns)]
                    other => Err($crate::codec::DecodeError::InvalidTag { what: stringify!($name), tag: other as u8 }),
                }
            }
        }

        #[cfg(any(test, feature = "sample"))]
        impl $crate::sample::Sample for $name {
            fn sample(g: &mut $crate::sample::Gen) -> Self {
                let kinds = [$($kind::$variant),*];
                match kinds[g.pick(kinds.len())] {
                    $($kind::$variant => $name::$variant { $($field: $crate::sample::Sample::sample(g),)* },)*
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("only listed kinds are picked"),
                }
            }
        }
    };
}

/// Declares one command set: its number and name, and for each command its number, its command
/// layout (`out`) and its reply layout (`reply`). Writing `;` instead of a field list means the
/// type is written by hand next to the table.
///
/// Generates the structs, their codecs, a [`crate::Command`] impl tying each command to its reply,
/// and `COMMANDS`, this set's part of the protocol's command table.
#[macro_export]
#[doc(hidden)]
macro_rules! command_set {
    (
        $(#[$setmeta:meta])*
        $set:ident = $setid:literal {
            $(
                $(#[$cmeta:meta])*
                $cmd:ident = $cmdid:literal {
                    out $out:ident $outbody:tt
                    reply $reply:ident $replybody:tt
                }
            )*
        }
    ) => {
        /// This command set's number.
        pub const SET: u8 = $setid;
        /// This command set's name in the spec.
        pub const SET_NAME: &str = stringify!($set);

        $(
            $crate::jdwp_struct!($(#[$cmeta])* $out $outbody);
            $crate::jdwp_struct!(#[doc = concat!("Reply to [`", stringify!($out), "`].")] $reply $replybody);

            impl $crate::Command for $out {
                const SET: u8 = $setid;
                const CMD: u8 = $cmdid;
                const SET_NAME: &'static str = stringify!($set);
                const NAME: &'static str = stringify!($cmd);
                const QUALIFIED_NAME: &'static str = concat!(stringify!($set), ".", stringify!($cmd));
                type Reply = $reply;
            }
        )*

        /// This set's entries of the protocol's command table.
        pub const COMMANDS: &[$crate::CommandInfo] = &[$(
            $crate::CommandInfo {
                set: $setid,
                cmd: $cmdid,
                set_name: stringify!($set),
                name: stringify!($cmd),
                qualified_name: concat!(stringify!($set), ".", stringify!($cmd)),
                #[cfg(any(test, feature = "sample"))]
                check: $crate::check::CommandCheck {
                    round_trip: $crate::check::round_trip_command::<$out>,
                    decode_garbage: $crate::check::decode_garbage_command::<$out>,
                    sample_bodies: $crate::check::sample_bodies::<$out>,
                    sample_command: $crate::check::sample_command::<$out>,
                    decode_reply: $crate::check::decode_reply::<$out>,
                },
            }
        ),*];
    };
}
