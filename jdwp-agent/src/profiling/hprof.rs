//! The HPROF binary heap dump format ("JAVA PROFILE 1.0.2"), written: the file layout jmap, the
//! JDK's `HotSpotDiagnosticMXBean.dumpHeap`, Eclipse MAT and VisualVM share. No JVMTI here:
//! [`heap_dump`](super::heap_dump) collects, this module only encodes.
//!
//! Layout (as HotSpot's `heapDumper.cpp` documents it): the header (the format name, NUL, u4
//! identifier size, u8 milliseconds since the epoch), then records of `u1 tag, u4 microseconds
//! since the header's time, u4 body length, body`. All numbers are big-endian. Identifiers are 8
//! bytes here. Names (`UTF8`), classes (`LOAD CLASS`), frames and stack traces come first; then the
//! heap as `HEAP DUMP SEGMENT` records of sub-records (roots, class dumps, instance and array
//! dumps), closed by `HEAP DUMP END`. Segments keep each record's u4 length far from overflowing.

use std::collections::HashMap;
use std::io::{self, Write};

/// The identifier size this writer uses (objects, classes, names, frames).
pub const ID_SIZE: u32 = 8;

/// Record tags.
pub mod tag {
    pub const UTF8: u8 = 0x01;
    pub const LOAD_CLASS: u8 = 0x02;
    pub const FRAME: u8 = 0x04;
    pub const TRACE: u8 = 0x05;
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    pub const HEAP_DUMP_END: u8 = 0x2C;
}

/// Heap dump sub-record tags.
pub mod sub {
    pub const ROOT_UNKNOWN: u8 = 0xFF;
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    pub const ROOT_MONITOR_USED: u8 = 0x07;
    pub const ROOT_THREAD_OBJ: u8 = 0x08;
    pub const CLASS_DUMP: u8 = 0x20;
    pub const INSTANCE_DUMP: u8 = 0x21;
    pub const OBJ_ARRAY_DUMP: u8 = 0x22;
    pub const PRIM_ARRAY_DUMP: u8 = 0x23;
}

/// The serial number of the empty stack trace every object and class refers to (as HotSpot's
/// dumps do: allocation stacks are not recorded).
pub const EMPTY_TRACE: u32 = 1;

/// A field's or array element's type, with HPROF's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BasicType {
    Object = 2,
    Boolean = 4,
    Char = 5,
    Float = 6,
    Double = 7,
    Byte = 8,
    Short = 9,
    Int = 10,
    Long = 11,
}

impl BasicType {
    /// The type of a field or element with this JVM descriptor (`I`, `Ljava/lang/String;`, `[B`).
    pub fn from_descriptor(descriptor: &str) -> Option<BasicType> {
        Some(match descriptor.as_bytes().first()? {
            b'L' | b'[' => BasicType::Object,
            b'Z' => BasicType::Boolean,
            b'C' => BasicType::Char,
            b'F' => BasicType::Float,
            b'D' => BasicType::Double,
            b'B' => BasicType::Byte,
            b'S' => BasicType::Short,
            b'I' => BasicType::Int,
            b'J' => BasicType::Long,
            _ => return None,
        })
    }

    /// Bytes one value takes in the dump.
    pub fn size(self) -> usize {
        match self {
            BasicType::Object => ID_SIZE as usize,
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }
}

/// Appends `value`'s low `ty.size()` bytes, big-endian: a primitive's bits (as JNI's `jvalue`
/// holds them, zero-extended) or an object ID.
pub fn put_value(out: &mut Vec<u8>, ty: BasicType, value: u64) {
    let bytes = value.to_be_bytes();
    out.extend_from_slice(&bytes[8 - ty.size()..]);
}

/// A class as a `CLASS DUMP` describes it.
#[derive(Debug, Clone, Default)]
pub struct ClassDump {
    pub id: u64,
    /// 0 for `java.lang.Object`, interfaces and primitive types.
    pub super_id: u64,
    /// 0 for the boot loader.
    pub loader_id: u64,
    /// Bytes of the instance fields of the class and its superclasses, as this format stores them.
    pub instance_size: u32,
    /// Name, type and value (as for [`put_value`]).
    pub static_fields: Vec<(String, BasicType, u64)>,
    /// This class's own instance fields, in the order their values appear in instance dumps.
    pub instance_fields: Vec<(String, BasicType)>,
}

/// Writes an HPROF file: the caller writes names, classes and stacks first, then opens the heap
/// dump and writes its sub-records, then [`HprofWriter::finish`]es.
pub struct HprofWriter<W: Write> {
    out: W,
    names: HashMap<String, u64>,
    next_name_id: u64,
    next_frame_id: u64,
    /// Sub-records of the heap dump segment being built.
    segment: Vec<u8>,
    in_heap_dump: bool,
    written: u64,
}

/// Segments are flushed at this size; any size below 4 GiB would do.
const SEGMENT_SIZE: usize = 1 << 20;

/// Names and frames get IDs from ranges of their own, far above object tags, so a reader that
/// (wrongly) mixes ID spaces still cannot confuse them.
const NAME_ID_BASE: u64 = 1 << 48;
const FRAME_ID_BASE: u64 = 1 << 49;

impl<W: Write> HprofWriter<W> {
    /// Writes the header.
    pub fn new(mut out: W, timestamp_millis: u64) -> io::Result<HprofWriter<W>> {
        out.write_all(b"JAVA PROFILE 1.0.2\0")?;
        out.write_all(&ID_SIZE.to_be_bytes())?;
        out.write_all(&timestamp_millis.to_be_bytes())?;
        Ok(HprofWriter {
            out,
            names: HashMap::new(),
            next_name_id: NAME_ID_BASE,
            next_frame_id: FRAME_ID_BASE,
            segment: Vec::with_capacity(SEGMENT_SIZE),
            in_heap_dump: false,
            written: 19 + 4 + 8,
        })
    }

    fn record(&mut self, tag: u8, body: &[u8]) -> io::Result<()> {
        let len = u32::try_from(body.len()).map_err(|_| io::Error::other("HPROF record over 4 GiB"))?;
        self.out.write_all(&[tag])?;
        self.out.write_all(&0u32.to_be_bytes())?;
        self.out.write_all(&len.to_be_bytes())?;
        self.out.write_all(body)?;
        self.written += 9 + u64::from(len);
        Ok(())
    }

    /// The ID of `name`, writing its `UTF8` record the first time.
    pub fn name(&mut self, name: &str) -> io::Result<u64> {
        if let Some(&id) = self.names.get(name) {
            return Ok(id);
        }
        let id = self.next_name_id;
        self.next_name_id += 1;
        let mut body = Vec::with_capacity(8 + name.len());
        body.extend_from_slice(&id.to_be_bytes());
        body.extend_from_slice(name.as_bytes());
        self.record(tag::UTF8, &body)?;
        self.names.insert(name.to_owned(), id);
        Ok(id)
    }

    /// `LOAD CLASS`: `name` as the VM spells it internally (`java/lang/String`, `[I`).
    pub fn load_class(&mut self, serial: u32, class_id: u64, name: &str) -> io::Result<()> {
        let name_id = self.name(name)?;
        let mut body = Vec::with_capacity(24);
        body.extend_from_slice(&serial.to_be_bytes());
        body.extend_from_slice(&class_id.to_be_bytes());
        body.extend_from_slice(&EMPTY_TRACE.to_be_bytes());
        body.extend_from_slice(&name_id.to_be_bytes());
        self.record(tag::LOAD_CLASS, &body)
    }

    /// `FRAME`; returns its ID. `line`: > 0, or -1 unknown, -2 compiled, -3 native.
    pub fn frame(
        &mut self,
        method: &str,
        signature: &str,
        source_file: Option<&str>,
        class_serial: u32,
        line: i32,
    ) -> io::Result<u64> {
        let method = self.name(method)?;
        let signature = self.name(signature)?;
        let source = match source_file {
            Some(file) => self.name(file)?,
            None => 0,
        };
        let id = self.next_frame_id;
        self.next_frame_id += 1;
        let mut body = Vec::with_capacity(40);
        for v in [id, method, signature, source] {
            body.extend_from_slice(&v.to_be_bytes());
        }
        body.extend_from_slice(&class_serial.to_be_bytes());
        body.extend_from_slice(&line.to_be_bytes());
        self.record(tag::FRAME, &body)?;
        Ok(id)
    }

    /// `TRACE`: the frames, innermost first.
    pub fn trace(&mut self, serial: u32, thread_serial: u32, frame_ids: &[u64]) -> io::Result<()> {
        let count = u32::try_from(frame_ids.len()).map_err(|_| io::Error::other("too many frames"))?;
        let mut body = Vec::with_capacity(12 + 8 * frame_ids.len());
        body.extend_from_slice(&serial.to_be_bytes());
        body.extend_from_slice(&thread_serial.to_be_bytes());
        body.extend_from_slice(&count.to_be_bytes());
        for id in frame_ids {
            body.extend_from_slice(&id.to_be_bytes());
        }
        self.record(tag::TRACE, &body)
    }

    /// Starts a sub-record of the heap dump; the caller appends its body to the returned buffer.
    fn sub_record(&mut self, sub_tag: u8) -> io::Result<&mut Vec<u8>> {
        self.in_heap_dump = true;
        if self.segment.len() >= SEGMENT_SIZE {
            self.flush_segment()?;
        }
        self.segment.push(sub_tag);
        Ok(&mut self.segment)
    }

    fn flush_segment(&mut self) -> io::Result<()> {
        if !self.segment.is_empty() {
            let segment = std::mem::take(&mut self.segment);
            self.record(tag::HEAP_DUMP_SEGMENT, &segment)?;
            self.segment = segment;
            self.segment.clear();
        }
        Ok(())
    }

    /// A GC root that is just an object ID (`ROOT_UNKNOWN`, `ROOT_STICKY_CLASS`,
    /// `ROOT_MONITOR_USED`).
    pub fn root(&mut self, sub_tag: u8, object_id: u64) -> io::Result<()> {
        self.sub_record(sub_tag)?.extend_from_slice(&object_id.to_be_bytes());
        Ok(())
    }

    /// `ROOT_JNI_GLOBAL` (the global reference's own ID is unknown to JVMTI: 0).
    pub fn root_jni_global(&mut self, object_id: u64) -> io::Result<()> {
        let body = self.sub_record(sub::ROOT_JNI_GLOBAL)?;
        body.extend_from_slice(&object_id.to_be_bytes());
        body.extend_from_slice(&0u64.to_be_bytes());
        Ok(())
    }

    /// `ROOT_JAVA_FRAME` or `ROOT_JNI_LOCAL`: an object a thread's frame refers to (frame -1:
    /// unknown).
    pub fn root_frame(&mut self, sub_tag: u8, object_id: u64, thread_serial: u32, frame: i32) -> io::Result<()> {
        let body = self.sub_record(sub_tag)?;
        body.extend_from_slice(&object_id.to_be_bytes());
        body.extend_from_slice(&thread_serial.to_be_bytes());
        body.extend_from_slice(&frame.to_be_bytes());
        Ok(())
    }

    /// `ROOT_THREAD_OBJ`.
    pub fn root_thread(&mut self, object_id: u64, thread_serial: u32, trace_serial: u32) -> io::Result<()> {
        let body = self.sub_record(sub::ROOT_THREAD_OBJ)?;
        body.extend_from_slice(&object_id.to_be_bytes());
        body.extend_from_slice(&thread_serial.to_be_bytes());
        body.extend_from_slice(&trace_serial.to_be_bytes());
        Ok(())
    }

    /// `CLASS DUMP`.
    pub fn class_dump(&mut self, class: &ClassDump) -> io::Result<()> {
        let mut statics = Vec::new();
        for (name, ty, value) in &class.static_fields {
            statics.push((self.name(name)?, *ty, *value));
        }
        let mut fields = Vec::new();
        for (name, ty) in &class.instance_fields {
            fields.push((self.name(name)?, *ty));
        }
        let statics_count = u16::try_from(statics.len()).map_err(|_| io::Error::other("too many static fields"))?;
        let fields_count = u16::try_from(fields.len()).map_err(|_| io::Error::other("too many fields"))?;
        let body = self.sub_record(sub::CLASS_DUMP)?;
        body.extend_from_slice(&class.id.to_be_bytes());
        body.extend_from_slice(&EMPTY_TRACE.to_be_bytes());
        body.extend_from_slice(&class.super_id.to_be_bytes());
        body.extend_from_slice(&class.loader_id.to_be_bytes());
        // Signers, protection domain, two reserved IDs.
        body.extend_from_slice(&[0; 4 * ID_SIZE as usize]);
        body.extend_from_slice(&class.instance_size.to_be_bytes());
        body.extend_from_slice(&0u16.to_be_bytes()); // constant pool entries
        body.extend_from_slice(&statics_count.to_be_bytes());
        for (name, ty, value) in statics {
            body.extend_from_slice(&name.to_be_bytes());
            body.push(ty as u8);
            put_value(body, ty, value);
        }
        body.extend_from_slice(&fields_count.to_be_bytes());
        for (name, ty) in fields {
            body.extend_from_slice(&name.to_be_bytes());
            body.push(ty as u8);
        }
        Ok(())
    }

    /// `INSTANCE DUMP`: `values` are the field values already encoded, the class's own fields
    /// first, then its superclass's, up to `java.lang.Object`.
    pub fn instance_dump(&mut self, id: u64, class_id: u64, values: &[u8]) -> io::Result<()> {
        let len = u32::try_from(values.len()).map_err(|_| io::Error::other("instance too large"))?;
        let body = self.sub_record(sub::INSTANCE_DUMP)?;
        body.extend_from_slice(&id.to_be_bytes());
        body.extend_from_slice(&EMPTY_TRACE.to_be_bytes());
        body.extend_from_slice(&class_id.to_be_bytes());
        body.extend_from_slice(&len.to_be_bytes());
        body.extend_from_slice(values);
        Ok(())
    }

    /// `OBJ ARRAY DUMP`.
    pub fn object_array_dump(&mut self, id: u64, class_id: u64, elements: &[u64]) -> io::Result<()> {
        let len = u32::try_from(elements.len()).map_err(|_| io::Error::other("array too long"))?;
        let body = self.sub_record(sub::OBJ_ARRAY_DUMP)?;
        body.extend_from_slice(&id.to_be_bytes());
        body.extend_from_slice(&EMPTY_TRACE.to_be_bytes());
        body.extend_from_slice(&len.to_be_bytes());
        body.extend_from_slice(&class_id.to_be_bytes());
        for e in elements {
            body.extend_from_slice(&e.to_be_bytes());
        }
        Ok(())
    }

    /// `PRIM ARRAY DUMP`: `elements` already big-endian, `length * ty.size()` bytes.
    pub fn primitive_array_dump(&mut self, id: u64, ty: BasicType, length: u32, elements: &[u8]) -> io::Result<()> {
        debug_assert_eq!(elements.len(), length as usize * ty.size());
        let body = self.sub_record(sub::PRIM_ARRAY_DUMP)?;
        body.extend_from_slice(&id.to_be_bytes());
        body.extend_from_slice(&EMPTY_TRACE.to_be_bytes());
        body.extend_from_slice(&length.to_be_bytes());
        body.push(ty as u8);
        body.extend_from_slice(elements);
        Ok(())
    }

    /// Closes the heap dump (`HEAP DUMP END`), flushes, and returns the output and the bytes
    /// written.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.flush_segment()?;
        if self.in_heap_dump {
            self.record(tag::HEAP_DUMP_END, &[])?;
        }
        self.out.flush()?;
        Ok((self.out, self.written))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_rig::hprof::{Hprof, Value};

    #[test]
    fn a_small_dump_reads_back_strictly() {
        let mut w = HprofWriter::new(Vec::new(), 1234).unwrap();
        w.load_class(1, 100, "java/lang/Object").unwrap();
        w.load_class(2, 101, "Point").unwrap();
        w.load_class(3, 102, "[LPoint;").unwrap();
        w.trace(EMPTY_TRACE, 0, &[]).unwrap();
        let frame = w.frame("main", "([Ljava/lang/String;)V", Some("Point.java"), 2, 7).unwrap();
        w.trace(2, 1, &[frame]).unwrap();
        w.root(sub::ROOT_STICKY_CLASS, 100).unwrap();
        w.root_thread(500, 1, 2).unwrap();
        w.root_frame(sub::ROOT_JAVA_FRAME, 200, 1, 0).unwrap();
        w.class_dump(&ClassDump { id: 100, ..Default::default() }).unwrap();
        w.class_dump(&ClassDump {
            id: 101,
            super_id: 100,
            instance_size: 12,
            static_fields: vec![("ORIGIN".into(), BasicType::Object, 200)],
            instance_fields: vec![("x".into(), BasicType::Int), ("next".into(), BasicType::Object)],
            ..Default::default()
        })
        .unwrap();
        w.class_dump(&ClassDump { id: 102, super_id: 100, ..Default::default() }).unwrap();
        let mut values = Vec::new();
        put_value(&mut values, BasicType::Int, (-5i32) as u32 as u64);
        put_value(&mut values, BasicType::Object, 0);
        w.instance_dump(200, 101, &values).unwrap();
        w.primitive_array_dump(300, BasicType::Int, 2, &[0, 0, 0, 1, 0, 0, 0, 2]).unwrap();
        w.object_array_dump(301, 102, &[200, 0]).unwrap();
        let (data, written) = w.finish().unwrap();
        assert_eq!(written, data.len() as u64);
        assert_eq!(&data[..19], b"JAVA PROFILE 1.0.2\0");

        let dump = Hprof::parse(&data).unwrap();
        assert_eq!(dump.timestamp_millis, 1234);
        let points = dump.instances_of("Point");
        assert_eq!(points, vec![200]);
        assert_eq!(dump.field(200, "x"), Some(Value::Int(-5)));
        assert_eq!(dump.field(200, "next"), Some(Value::Object(0)));
        assert_eq!(dump.static_field("Point", "ORIGIN"), Some(Value::Object(200)));
        assert_eq!(dump.primitive_arrays[&300], Value::IntArray(vec![1, 2]));
        assert_eq!(dump.object_arrays[&301].elements, vec![200, 0]);
        assert_eq!(dump.traces[&2].frames.len(), 1);
        assert_eq!(dump.roots.len(), 3);
    }

    #[test]
    fn values_are_big_endian_and_sized_by_type() {
        let mut out = Vec::new();
        put_value(&mut out, BasicType::Short, 0x1234);
        put_value(&mut out, BasicType::Boolean, 1);
        put_value(&mut out, BasicType::Long, 0x0102_0304_0506_0708);
        assert_eq!(out, [0x12, 0x34, 1, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(BasicType::from_descriptor("[I"), Some(BasicType::Object));
        assert_eq!(BasicType::from_descriptor("J"), Some(BasicType::Long));
        assert_eq!(BasicType::from_descriptor(""), None);
    }
}
