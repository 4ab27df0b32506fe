//! A strict reader of HPROF binary heap dumps ("JAVA PROFILE 1.0.2"), for tests of the agent's
//! heap dump: it refuses anything a careful tool (Eclipse MAT, VisualVM) could trip on, so a dump
//! that parses here has a sound structure, and it answers questions about objects, fields and
//! arrays.
//!
//! Checked: the header; every record's length matches its body exactly; only known record and
//! sub-record tags; names defined before use; no duplicate IDs; every instance's and array's
//! class has a `LOAD CLASS` and a `CLASS DUMP`; every instance's field bytes equal the sizes of the
//! fields its class and superclasses declare; every superclass exists; every stack trace's frames
//! and every frame's class exist; the heap dump is closed by `HEAP DUMP END`, the last record.
//! References to objects absent from the dump are collected in [`Hprof::dangling`] for the test to
//! judge.

use std::collections::{HashMap, HashSet};

/// What went wrong, and where (byte offset in the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HPROF at byte {offset}: {message}")]
pub struct HprofError {
    pub offset: usize,
    pub message: String,
}

/// A field value, or a primitive array's elements.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Object(u64),
    Boolean(bool),
    Char(u16),
    Float(f32),
    Double(f64),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    BooleanArray(Vec<bool>),
    CharArray(Vec<u16>),
    FloatArray(Vec<f32>),
    DoubleArray(Vec<f64>),
    ByteArray(Vec<i8>),
    ShortArray(Vec<i16>),
    IntArray(Vec<i32>),
    LongArray(Vec<i64>),
}

#[derive(Debug, Clone)]
pub struct LoadedClass {
    pub serial: u32,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct ClassDump {
    pub super_id: u64,
    pub loader_id: u64,
    pub instance_size: u32,
    pub static_fields: Vec<(String, Value)>,
    /// Name and HPROF type code.
    pub instance_fields: Vec<(String, u8)>,
}

#[derive(Debug, Clone)]
pub struct Instance {
    pub class_id: u64,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct ObjectArray {
    pub class_id: u64,
    pub elements: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct Frame {
    pub method: String,
    pub signature: String,
    pub source_file: Option<String>,
    pub class_serial: u32,
    pub line: i32,
}

#[derive(Debug, Clone)]
pub struct Trace {
    pub thread_serial: u32,
    pub frames: Vec<u64>,
}

/// A parsed dump.
#[derive(Debug, Default)]
pub struct Hprof {
    pub timestamp_millis: u64,
    pub names: HashMap<u64, String>,
    pub classes: HashMap<u64, LoadedClass>,
    pub class_dumps: HashMap<u64, ClassDump>,
    pub instances: HashMap<u64, Instance>,
    pub object_arrays: HashMap<u64, ObjectArray>,
    pub primitive_arrays: HashMap<u64, Value>,
    pub frames: HashMap<u64, Frame>,
    pub traces: HashMap<u32, Trace>,
    /// (sub-record tag, object ID).
    pub roots: Vec<(u8, u64)>,
    /// References (from fields, static fields, array elements) to IDs the dump does not contain.
    pub dangling: Vec<u64>,
    /// `LOAD CLASS` records repeating an earlier one (same ID and name; HotSpot writes some).
    pub repeated_class_loads: usize,
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn err(&self, message: impl Into<String>) -> HprofError {
        HprofError { offset: self.pos, message: message.into() }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], HprofError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| self.err("truncated"))?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn u1(&mut self) -> Result<u8, HprofError> {
        Ok(self.take(1)?[0])
    }

    fn u2(&mut self) -> Result<u16, HprofError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }

    fn u4(&mut self) -> Result<u32, HprofError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u8(&mut self) -> Result<u64, HprofError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn id(&mut self) -> Result<u64, HprofError> {
        self.u8()
    }

    fn done(&self) -> bool {
        self.pos == self.data.len()
    }
}

/// Bytes of one value of HPROF type `ty`.
fn type_size(ty: u8) -> Option<usize> {
    Some(match ty {
        2 => 8,
        4 | 8 => 1,
        5 | 9 => 2,
        6 | 10 => 4,
        7 | 11 => 8,
        _ => return None,
    })
}

fn decode_value(ty: u8, bytes: &[u8]) -> Value {
    let mut b = [0u8; 8];
    b[8 - bytes.len()..].copy_from_slice(bytes);
    let v = u64::from_be_bytes(b);
    match ty {
        2 => Value::Object(v),
        4 => Value::Boolean(v != 0),
        5 => Value::Char(v as u16),
        6 => Value::Float(f32::from_bits(v as u32)),
        7 => Value::Double(f64::from_bits(v)),
        8 => Value::Byte(v as u8 as i8),
        9 => Value::Short(v as u16 as i16),
        10 => Value::Int(v as u32 as i32),
        _ => Value::Long(v as i64),
    }
}

impl Hprof {
    /// Parses and checks a whole dump.
    pub fn parse(data: &[u8]) -> Result<Hprof, HprofError> {
        let mut c = Cursor { data, pos: 0 };
        let header = b"JAVA PROFILE 1.0.2\0";
        if c.take(header.len())? != header {
            return Err(HprofError { offset: 0, message: "not a JAVA PROFILE 1.0.2 file".into() });
        }
        if c.u4()? != 8 {
            return Err(c.err("identifier size is not 8"));
        }
        let mut dump = Hprof { timestamp_millis: c.u8()?, ..Default::default() };
        let mut heap_started = false;
        let mut ended = false;
        let mut class_serials = HashSet::new();
        while !c.done() {
            if ended {
                return Err(c.err("record after HEAP DUMP END"));
            }
            let tag = c.u1()?;
            let _micros = c.u4()?;
            let len = c.u4()? as usize;
            let start = c.pos;
            let body = c.take(len)?;
            let mut r = Cursor { data: body, pos: 0 };
            let at = |e: HprofError| HprofError { offset: start + e.offset, message: e.message };
            match tag {
                0x01 => {
                    let id = r.id().map_err(at)?;
                    // The VM writes names in its modified UTF-8.
                    let text = jdwp_protocol::mutf8::decode(&body[8..]);
                    if dump.names.insert(id, text).is_some() {
                        return Err(HprofError { offset: start, message: format!("name {id:#x} defined twice") });
                    }
                    r.pos = body.len();
                }
                0x02 => {
                    let serial = r.u4().map_err(at)?;
                    let id = r.id().map_err(at)?;
                    let _trace = r.u4().map_err(at)?;
                    let name = dump.name(r.id().map_err(at)?).map_err(at)?;
                    if !class_serials.insert(serial) {
                        return Err(HprofError { offset: start, message: format!("class serial {serial} used twice") });
                    }
                    if let Some(old) = dump.classes.insert(id, LoadedClass { serial, name: name.clone() }) {
                        // HotSpot's own dumps load object array classes once per dimension walk:
                        // the same class under the same name again is counted, not refused.
                        if old.name == name {
                            dump.repeated_class_loads += 1;
                            continue;
                        }
                        return Err(HprofError {
                            offset: start,
                            message: format!(
                                "class {id:#x} loaded twice ({} #{}, {name} #{serial})",
                                old.name, old.serial
                            ),
                        });
                    }
                }
                0x04 => {
                    let id = r.id().map_err(at)?;
                    let method = dump.name(r.id().map_err(at)?).map_err(at)?;
                    let signature = dump.name(r.id().map_err(at)?).map_err(at)?;
                    let source = r.id().map_err(at)?;
                    let source_file = if source == 0 { None } else { Some(dump.name(source).map_err(at)?) };
                    let class_serial = r.u4().map_err(at)?;
                    let line = r.u4().map_err(at)? as i32;
                    if !class_serials.contains(&class_serial) {
                        return Err(HprofError {
                            offset: start,
                            message: format!("frame of unknown class {class_serial}"),
                        });
                    }
                    dump.frames.insert(id, Frame { method, signature, source_file, class_serial, line });
                }
                0x05 => {
                    let serial = r.u4().map_err(at)?;
                    let thread_serial = r.u4().map_err(at)?;
                    let n = r.u4().map_err(at)?;
                    let mut frames = Vec::new();
                    for _ in 0..n {
                        let f = r.id().map_err(at)?;
                        if !dump.frames.contains_key(&f) {
                            return Err(HprofError {
                                offset: start,
                                message: format!("trace of unknown frame {f:#x}"),
                            });
                        }
                        frames.push(f);
                    }
                    dump.traces.insert(serial, Trace { thread_serial, frames });
                }
                0x0C | 0x1C => {
                    heap_started = true;
                    dump.heap_records(&mut r).map_err(at)?;
                }
                0x2C => {
                    if !heap_started || len != 0 {
                        return Err(HprofError { offset: start, message: "misplaced HEAP DUMP END".into() });
                    }
                    ended = true;
                }
                other => return Err(HprofError { offset: start, message: format!("unknown record tag {other:#x}") }),
            }
            if !r.done() {
                return Err(HprofError {
                    offset: start + r.pos,
                    message: format!("record {tag:#x} longer than its body"),
                });
            }
        }
        if heap_started && !ended {
            return Err(c.err("no HEAP DUMP END"));
        }
        dump.check()?;
        Ok(dump)
    }

    fn name(&self, id: u64) -> Result<String, HprofError> {
        self.names.get(&id).cloned().ok_or(HprofError { offset: 0, message: format!("undefined name {id:#x}") })
    }

    fn heap_records(&mut self, r: &mut Cursor) -> Result<(), HprofError> {
        while !r.done() {
            let sub = r.u1()?;
            match sub {
                0xFF | 0x05 | 0x07 => {
                    let id = r.id()?;
                    self.roots.push((sub, id));
                }
                0x01 => {
                    let id = r.id()?;
                    r.id()?;
                    self.roots.push((sub, id));
                }
                0x02 | 0x03 | 0x08 => {
                    let id = r.id()?;
                    r.u4()?;
                    r.u4()?;
                    self.roots.push((sub, id));
                }
                0x04 | 0x06 => {
                    let id = r.id()?;
                    r.u4()?;
                    self.roots.push((sub, id));
                }
                0x20 => {
                    let id = r.id()?;
                    r.u4()?;
                    let super_id = r.id()?;
                    let loader_id = r.id()?;
                    for _ in 0..4 {
                        r.id()?;
                    }
                    let instance_size = r.u4()?;
                    let cp = r.u2()?;
                    for _ in 0..cp {
                        r.u2()?;
                        let ty = r.u1()?;
                        r.take(type_size(ty).ok_or_else(|| r.err("bad constant type"))?)?;
                    }
                    let mut static_fields = Vec::new();
                    for _ in 0..r.u2()? {
                        let name = self.name(r.id()?)?;
                        let ty = r.u1()?;
                        let size = type_size(ty).ok_or_else(|| r.err(format!("bad static field type {ty}")))?;
                        static_fields.push((name, decode_value(ty, r.take(size)?)));
                    }
                    let mut instance_fields = Vec::new();
                    for _ in 0..r.u2()? {
                        let name = self.name(r.id()?)?;
                        let ty = r.u1()?;
                        type_size(ty).ok_or_else(|| r.err(format!("bad field type {ty}")))?;
                        instance_fields.push((name, ty));
                    }
                    let dump = ClassDump { super_id, loader_id, instance_size, static_fields, instance_fields };
                    if self.class_dumps.insert(id, dump).is_some() {
                        return Err(r.err(format!("class {id:#x} dumped twice")));
                    }
                }
                0x21 => {
                    let id = r.id()?;
                    r.u4()?;
                    let class_id = r.id()?;
                    let n = r.u4()? as usize;
                    let data = r.take(n)?.to_vec();
                    if self.instances.insert(id, Instance { class_id, data }).is_some() {
                        return Err(r.err(format!("object {id:#x} dumped twice")));
                    }
                }
                0x22 => {
                    let id = r.id()?;
                    r.u4()?;
                    let n = r.u4()?;
                    let class_id = r.id()?;
                    let elements = (0..n).map(|_| r.id()).collect::<Result<Vec<_>, _>>()?;
                    if self.object_arrays.insert(id, ObjectArray { class_id, elements }).is_some() {
                        return Err(r.err(format!("array {id:#x} dumped twice")));
                    }
                }
                0x23 => {
                    let id = r.id()?;
                    r.u4()?;
                    let n = r.u4()? as usize;
                    let ty = r.u1()?;
                    let size = type_size(ty).filter(|_| ty != 2).ok_or_else(|| r.err("bad primitive array type"))?;
                    let bytes = r.take(n.checked_mul(size).ok_or_else(|| r.err("array too long"))?)?;
                    let values = bytes.chunks(size).map(|b| decode_value(ty, b));
                    let array = match ty {
                        4 => Value::BooleanArray(values.map(|v| v == Value::Boolean(true)).collect()),
                        5 => Value::CharArray(values.map(|v| if let Value::Char(x) = v { x } else { 0 }).collect()),
                        6 => Value::FloatArray(values.map(|v| if let Value::Float(x) = v { x } else { 0.0 }).collect()),
                        7 => {
                            Value::DoubleArray(values.map(|v| if let Value::Double(x) = v { x } else { 0.0 }).collect())
                        }
                        8 => Value::ByteArray(values.map(|v| if let Value::Byte(x) = v { x } else { 0 }).collect()),
                        9 => Value::ShortArray(values.map(|v| if let Value::Short(x) = v { x } else { 0 }).collect()),
                        10 => Value::IntArray(values.map(|v| if let Value::Int(x) = v { x } else { 0 }).collect()),
                        _ => Value::LongArray(values.map(|v| if let Value::Long(x) = v { x } else { 0 }).collect()),
                    };
                    if self.primitive_arrays.insert(id, array).is_some() {
                        return Err(r.err(format!("array {id:#x} dumped twice")));
                    }
                }
                other => return Err(r.err(format!("unknown heap sub-record {other:#x}"))),
            }
        }
        Ok(())
    }

    /// Cross-record checks, once everything is read.
    fn check(&mut self) -> Result<(), HprofError> {
        let fail = |message: String| Err(HprofError { offset: 0, message });
        for (id, class) in &self.class_dumps {
            if !self.classes.contains_key(id) {
                return fail(format!("class {id:#x} dumped without LOAD CLASS"));
            }
            if class.super_id != 0 && !self.class_dumps.contains_key(&class.super_id) {
                return fail(format!("class {id:#x} has an undumped superclass {:#x}", class.super_id));
            }
        }
        let mut references = Vec::new();
        for (id, instance) in &self.instances {
            let fields = self.all_fields(instance.class_id).ok_or(HprofError {
                offset: 0,
                message: format!("object {id:#x} of undumped class {:#x}", instance.class_id),
            })?;
            let size: usize = fields.iter().map(|f| type_size(f.1).unwrap()).sum();
            if size != instance.data.len() {
                return fail(format!(
                    "object {id:#x} has {} field bytes, its class declares {size}",
                    instance.data.len()
                ));
            }
            let mut pos = 0;
            for (_, ty) in fields {
                let n = type_size(ty).unwrap();
                if let Value::Object(r) = decode_value(ty, &instance.data[pos..pos + n]) {
                    references.push(r);
                }
                pos += n;
            }
        }
        for (id, array) in &self.object_arrays {
            if !self.class_dumps.contains_key(&array.class_id) {
                return fail(format!("array {id:#x} of undumped class {:#x}", array.class_id));
            }
            references.extend(&array.elements);
        }
        for class in self.class_dumps.values() {
            for (_, v) in &class.static_fields {
                if let Value::Object(r) = v {
                    references.push(*r);
                }
            }
        }
        for r in references {
            if r != 0 && !self.contains(r) {
                self.dangling.push(r);
            }
        }
        Ok(())
    }

    /// Whether the dump has an object (instance, array or class) with this ID.
    pub fn contains(&self, id: u64) -> bool {
        self.instances.contains_key(&id)
            || self.object_arrays.contains_key(&id)
            || self.primitive_arrays.contains_key(&id)
            || self.class_dumps.contains_key(&id)
    }

    /// The instance fields of `class_id` and its superclasses, in instance-dump order.
    fn all_fields(&self, class_id: u64) -> Option<Vec<(String, u8)>> {
        let mut fields = Vec::new();
        let mut class = class_id;
        let mut guard = 0;
        while class != 0 {
            let dump = self.class_dumps.get(&class)?;
            fields.extend(dump.instance_fields.iter().cloned());
            class = dump.super_id;
            guard += 1;
            if guard > 1000 {
                return None;
            }
        }
        Some(fields)
    }

    /// The ID of the class named `name` (`java/lang/String`, `[I`).
    pub fn class_id(&self, name: &str) -> Option<u64> {
        self.classes.iter().find(|(_, c)| c.name == name).map(|(id, _)| *id)
    }

    /// The name of the class of an instance or array.
    pub fn class_name_of(&self, id: u64) -> Option<&str> {
        let class = match (self.instances.get(&id), self.object_arrays.get(&id)) {
            (Some(i), _) => i.class_id,
            (_, Some(a)) => a.class_id,
            _ => return None,
        };
        self.classes.get(&class).map(|c| c.name.as_str())
    }

    /// The instances of exactly the class `name`, by ID.
    pub fn instances_of(&self, name: &str) -> Vec<u64> {
        let Some(class) = self.class_id(name) else { return Vec::new() };
        let mut ids: Vec<u64> = self.instances.iter().filter(|(_, i)| i.class_id == class).map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids
    }

    /// The value of the field `name` of instance `id` (the most derived class's field of that
    /// name).
    pub fn field(&self, id: u64, name: &str) -> Option<Value> {
        let instance = self.instances.get(&id)?;
        let mut pos = 0;
        for (field, ty) in self.all_fields(instance.class_id)? {
            let n = type_size(ty)?;
            if field == name {
                return Some(decode_value(ty, instance.data.get(pos..pos + n)?));
            }
            pos += n;
        }
        None
    }

    /// The value of the static field `field` of the class named `class`.
    pub fn static_field(&self, class: &str, field: &str) -> Option<Value> {
        let dump = self.class_dumps.get(&self.class_id(class)?)?;
        dump.static_fields.iter().find(|(n, _)| n == field).map(|(_, v)| v.clone())
    }

    /// The text of the `java.lang.String` instance `id` (compact Latin-1 or UTF-16 in the
    /// little-endian byte order of the platforms we run on).
    pub fn string(&self, id: u64) -> Option<String> {
        if self.class_name_of(id)? != "java/lang/String" {
            return None;
        }
        let Some(Value::Object(value)) = self.field(id, "value") else { return None };
        let Some(Value::ByteArray(bytes)) = self.primitive_arrays.get(&value) else { return None };
        let bytes: Vec<u8> = bytes.iter().map(|&b| b as u8).collect();
        match self.field(id, "coder") {
            Some(Value::Byte(0)) => Some(bytes.iter().map(|&b| char::from(b)).collect()),
            Some(Value::Byte(1)) => {
                let units: Vec<u16> = bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
                String::from_utf16(&units).ok()
            }
            _ => None,
        }
    }
}
