//! Host arrays: a shape plus one typed buffer. Values flow through the
//! interpreter and the Python binding as `Arc<HostArray>` (cheap to share,
//! never mutated once shared).
//!
//! A buffer's elements are an [`Elems`]: a `Vec` this crate owns, or
//! foreign memory (NumPy, DLPack) read in place and kept alive by its owner
//! ([`foreign`]); writers copy foreign memory first.
//!
//! The storage layer also owns the allocation budget ([`budget`]: the most
//! bytes one buffer may take, checked before allocating) and the host buffer
//! pool ([`pool`]), so `array` and `ir` never reach into the executors.

pub mod alloc;
pub mod budget;
pub mod elems;
pub mod foreign;
pub mod live;
pub mod pool;

pub use elems::Elems;
pub use foreign::{ForeignOwner, OnRelease};

use crate::dtype::DType;
use crate::error::{Error, Result};
use half::{bf16, f16};
use std::sync::Arc;

/// complex64 element: f32 real and imaginary parts, stored interleaved (the
/// layout of NumPy's complex64 and of gemm's `c32`).
pub type C32 = num_complex::Complex<f32>;
/// complex128 element.
pub type C64 = num_complex::Complex<f64>;

/// Typed, row-major element storage. `Float0` stores only its length; `Key`
/// stores two u32 words per key element. Every other variant holds its
/// elements as an [`Elems`] (owned or foreign); a new element type is one
/// more variant of that form.
#[derive(Debug, Clone)]
pub enum Buffer {
    Bool(Elems<bool>),
    I8(Elems<i8>),
    I16(Elems<i16>),
    I32(Elems<i32>),
    I64(Elems<i64>),
    U8(Elems<u8>),
    U16(Elems<u16>),
    U32(Elems<u32>),
    U64(Elems<u64>),
    F16(Elems<f16>),
    BF16(Elems<bf16>),
    F32(Elems<f32>),
    F64(Elems<f64>),
    C64(Elems<C32>),
    C128(Elems<C64>),
    Float0(usize),
    Key(Elems<u32>),
}

/// Applies `$body` with `$v` bound to the typed [`Elems`] of every numeric,
/// complex or bool variant; float0 and key buffers go to `$other`. Bodies
/// are data movement (lengths, copies, gathers): the complex element types
/// are `Copy + PartialEq + Default` but have no ordering, so a body that
/// compares elements does not compile (such a rule matches the variants it
/// supports and rejects complex with a typed error).
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr, $other:pat => $other_body:expr) => {
        match $buf {
            $crate::Buffer::Bool($v) => $body,
            $crate::Buffer::I8($v) => $body,
            $crate::Buffer::I16($v) => $body,
            $crate::Buffer::I32($v) => $body,
            $crate::Buffer::I64($v) => $body,
            $crate::Buffer::U8($v) => $body,
            $crate::Buffer::U16($v) => $body,
            $crate::Buffer::U32($v) => $body,
            $crate::Buffer::U64($v) => $body,
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::BF16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::C64($v) => $body,
            $crate::Buffer::C128($v) => $body,
            $other => $other_body,
        }
    };
}

impl PartialEq for Buffer {
    /// Bitwise for floats, so a program holding a NaN constant equals itself
    /// (the compile cache confirms hash hits with `==`).
    fn eq(&self, other: &Buffer) -> bool {
        // Float slices compared by their bit patterns.
        macro_rules! bits_eq {
            ($a:expr, $b:expr) => {
                $a.into_iter()
                    .map(|x| x.to_bits())
                    .eq($b.into_iter().map(|x| x.to_bits()))
            };
        }
        match (self, other) {
            (Buffer::F16(a), Buffer::F16(b)) => bits_eq!(a, b),
            (Buffer::BF16(a), Buffer::BF16(b)) => bits_eq!(a, b),
            (Buffer::F32(a), Buffer::F32(b)) => bits_eq!(a, b),
            (Buffer::F64(a), Buffer::F64(b)) => bits_eq!(a, b),
            (Buffer::C64(a), Buffer::C64(b)) => {
                bits_eq!(a.iter().map(|z| z.re), b.iter().map(|z| z.re))
                    && bits_eq!(a.iter().map(|z| z.im), b.iter().map(|z| z.im))
            }
            (Buffer::C128(a), Buffer::C128(b)) => {
                bits_eq!(a.iter().map(|z| z.re), b.iter().map(|z| z.re))
                    && bits_eq!(a.iter().map(|z| z.im), b.iter().map(|z| z.im))
            }
            (Buffer::Bool(a), Buffer::Bool(b)) => a == b,
            (Buffer::I8(a), Buffer::I8(b)) => a == b,
            (Buffer::I16(a), Buffer::I16(b)) => a == b,
            (Buffer::I32(a), Buffer::I32(b)) => a == b,
            (Buffer::I64(a), Buffer::I64(b)) => a == b,
            (Buffer::U8(a), Buffer::U8(b)) => a == b,
            (Buffer::U16(a), Buffer::U16(b)) => a == b,
            (Buffer::U32(a), Buffer::U32(b)) => a == b,
            (Buffer::U64(a), Buffer::U64(b)) => a == b,
            (Buffer::Float0(a), Buffer::Float0(b)) => a == b,
            (Buffer::Key(a), Buffer::Key(b)) => a == b,
            _ => false,
        }
    }
}

impl Buffer {
    pub fn dtype(&self) -> DType {
        match self {
            Buffer::Bool(_) => DType::Bool,
            Buffer::I8(_) => DType::I8,
            Buffer::I16(_) => DType::I16,
            Buffer::I32(_) => DType::I32,
            Buffer::I64(_) => DType::I64,
            Buffer::U8(_) => DType::U8,
            Buffer::U16(_) => DType::U16,
            Buffer::U32(_) => DType::U32,
            Buffer::U64(_) => DType::U64,
            Buffer::F16(_) => DType::F16,
            Buffer::BF16(_) => DType::BF16,
            Buffer::F32(_) => DType::F32,
            Buffer::F64(_) => DType::F64,
            Buffer::C64(_) => DType::C64,
            Buffer::C128(_) => DType::C128,
            Buffer::Float0(_) => DType::Float0,
            Buffer::Key(_) => DType::Key,
        }
    }

    /// Number of array elements (a key element counts once).
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Buffer::Float0(n) => *n,
            Buffer::Key(v) => v.len() / 2,
            other => with_buffer!(other, v => v.len(), _ => 0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are owned by this crate (float0 counts as
    /// owned); foreign storage is read-only and never pooled or reused in
    /// place.
    pub fn is_owned(&self) -> bool {
        match self {
            Buffer::Float0(_) => true,
            Buffer::Key(v) => v.is_owned(),
            other => with_buffer!(other, v => v.is_owned(), _ => true),
        }
    }

    /// The elements as little-endian bytes (bool as one 0/1 byte, a key
    /// element as two u32 words, a complex element as its real then its
    /// imaginary part, float0 as nothing): the layout of exported constants
    /// and of device memory.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        fn flat<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        match self {
            Buffer::Bool(v) => v.iter().map(|&x| u8::from(x)).collect(),
            Buffer::I8(v) => flat(v, i8::to_le_bytes),
            Buffer::I16(v) => flat(v, i16::to_le_bytes),
            Buffer::I32(v) => flat(v, i32::to_le_bytes),
            Buffer::I64(v) => flat(v, i64::to_le_bytes),
            Buffer::U8(v) => v.to_vec(),
            Buffer::U16(v) => flat(v, u16::to_le_bytes),
            Buffer::U32(v) | Buffer::Key(v) => flat(v, u32::to_le_bytes),
            Buffer::U64(v) => flat(v, u64::to_le_bytes),
            Buffer::F16(v) => flat(v, |x: f16| x.to_bits().to_le_bytes()),
            Buffer::BF16(v) => flat(v, |x: bf16| x.to_bits().to_le_bytes()),
            Buffer::F32(v) => flat(v, |x: f32| x.to_bits().to_le_bytes()),
            Buffer::F64(v) => flat(v, |x: f64| x.to_bits().to_le_bytes()),
            Buffer::C64(v) => flat(&complex_parts(v), |x: f32| x.to_bits().to_le_bytes()),
            Buffer::C128(v) => flat(&complex_parts(v), |x: f64| x.to_bits().to_le_bytes()),
            Buffer::Float0(_) => Vec::new(),
        }
    }

    /// A buffer of `n` elements of `dtype` from exactly the bytes
    /// [`Buffer::to_le_bytes`] writes. `strict_bool` rejects bool bytes other
    /// than 0 and 1 (a loaded program); otherwise any non-zero byte is true
    /// (device memory). `what` names the data in errors.
    pub fn from_le_bytes(
        what: &'static str, dtype: DType, n: usize, bytes: &[u8], strict_bool: bool,
    ) -> Result<Buffer> {
        let want = n
            .checked_mul(dtype.itemsize())
            .ok_or_else(|| Error::Overflow {
                what,
                detail: format!("{n} elements of {dtype}"),
            })?;
        if bytes.len() != want {
            return Err(Error::InvalidArgument(format!(
                "{what} of {} bytes for {n} elements of {dtype} (need {want})",
                bytes.len()
            )));
        }
        fn words<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes
                .chunks_exact(N)
                .map(|c| {
                    let mut a = [0u8; N];
                    a.copy_from_slice(c);
                    f(a)
                })
                .collect()
        }
        Ok(match dtype {
            DType::Bool => Buffer::Bool(
                bytes
                    .iter()
                    .map(|&b| match b {
                        0 => Ok(false),
                        1 => Ok(true),
                        _ if !strict_bool => Ok(true),
                        _ => Err(Error::InvalidArgument(format!("{what}: bool byte {b}"))),
                    })
                    .collect::<Result<Vec<_>>>()?
                    .into(),
            ),
            DType::I8 => Buffer::I8(words(bytes, i8::from_le_bytes).into()),
            DType::I16 => Buffer::I16(words(bytes, i16::from_le_bytes).into()),
            DType::I32 => Buffer::I32(words(bytes, i32::from_le_bytes).into()),
            DType::I64 => Buffer::I64(words(bytes, i64::from_le_bytes).into()),
            DType::U8 => Buffer::U8(bytes.to_vec().into()),
            DType::U16 => Buffer::U16(words(bytes, u16::from_le_bytes).into()),
            DType::U32 => Buffer::U32(words(bytes, u32::from_le_bytes).into()),
            DType::U64 => Buffer::U64(words(bytes, u64::from_le_bytes).into()),
            DType::F16 => {
                Buffer::F16(words(bytes, |a| f16::from_bits(u16::from_le_bytes(a))).into())
            }
            DType::BF16 => {
                Buffer::BF16(words(bytes, |a| bf16::from_bits(u16::from_le_bytes(a))).into())
            }
            DType::F32 => {
                Buffer::F32(words(bytes, |a| f32::from_bits(u32::from_le_bytes(a))).into())
            }
            DType::F64 => {
                Buffer::F64(words(bytes, |a| f64::from_bits(u64::from_le_bytes(a))).into())
            }
            DType::C64 => Buffer::C64(
                complex_pairs(words(bytes, |a| f32::from_bits(u32::from_le_bytes(a)))).into(),
            ),
            DType::C128 => Buffer::C128(
                complex_pairs(words(bytes, |a| f64::from_bits(u64::from_le_bytes(a)))).into(),
            ),
            DType::Float0 => Buffer::Float0(n),
            DType::Key => Buffer::Key(words(bytes, u32::from_le_bytes).into()),
        })
    }

    /// [`Clone`], with owned storage copied fallibly
    /// ([`alloc`]): a copy the allocator refuses is an error.
    pub fn try_clone(&self, what: &str) -> Result<Buffer> {
        Ok(match self {
            Buffer::Float0(n) => Buffer::Float0(*n),
            Buffer::Key(v) => Buffer::Key(v.try_clone(what)?),
            Buffer::Bool(v) => Buffer::Bool(v.try_clone(what)?),
            Buffer::I8(v) => Buffer::I8(v.try_clone(what)?),
            Buffer::I16(v) => Buffer::I16(v.try_clone(what)?),
            Buffer::I32(v) => Buffer::I32(v.try_clone(what)?),
            Buffer::I64(v) => Buffer::I64(v.try_clone(what)?),
            Buffer::U8(v) => Buffer::U8(v.try_clone(what)?),
            Buffer::U16(v) => Buffer::U16(v.try_clone(what)?),
            Buffer::U32(v) => Buffer::U32(v.try_clone(what)?),
            Buffer::U64(v) => Buffer::U64(v.try_clone(what)?),
            Buffer::F16(v) => Buffer::F16(v.try_clone(what)?),
            Buffer::BF16(v) => Buffer::BF16(v.try_clone(what)?),
            Buffer::F32(v) => Buffer::F32(v.try_clone(what)?),
            Buffer::F64(v) => Buffer::F64(v.try_clone(what)?),
            Buffer::C64(v) => Buffer::C64(v.try_clone(what)?),
            Buffer::C128(v) => Buffer::C128(v.try_clone(what)?),
        })
    }

    /// A buffer of `n` zeros (false, 0, +0.0) of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Result<Buffer> {
        let words = n.checked_mul(2).ok_or_else(|| Error::Overflow {
            what: "zeros",
            detail: format!("{n} key elements"),
        })?;
        fn filled<T: Clone>(w: &str, dtype: DType, value: T, n: usize) -> Result<Elems<T>> {
            crate::array::budget::filled(w, dtype, value, n).map(Elems::from)
        }
        let w = "zeros";
        Ok(match dtype {
            DType::Bool => Buffer::Bool(filled(w, dtype, false, n)?),
            DType::I8 => Buffer::I8(filled(w, dtype, 0, n)?),
            DType::I16 => Buffer::I16(filled(w, dtype, 0, n)?),
            DType::I32 => Buffer::I32(filled(w, dtype, 0, n)?),
            DType::I64 => Buffer::I64(filled(w, dtype, 0, n)?),
            DType::U8 => Buffer::U8(filled(w, dtype, 0, n)?),
            DType::U16 => Buffer::U16(filled(w, dtype, 0, n)?),
            DType::U32 => Buffer::U32(filled(w, dtype, 0, n)?),
            DType::U64 => Buffer::U64(filled(w, dtype, 0, n)?),
            DType::F16 => Buffer::F16(filled(w, dtype, f16::ZERO, n)?),
            DType::BF16 => Buffer::BF16(filled(w, dtype, bf16::ZERO, n)?),
            DType::F32 => Buffer::F32(filled(w, dtype, 0.0, n)?),
            DType::F64 => Buffer::F64(filled(w, dtype, 0.0, n)?),
            DType::C64 => Buffer::C64(filled(w, dtype, C32::new(0.0, 0.0), n)?),
            DType::C128 => Buffer::C128(filled(w, dtype, C64::new(0.0, 0.0), n)?),
            DType::Float0 => Buffer::Float0(n),
            DType::Key => Buffer::Key(filled(w, DType::U32, 0, words)?),
        })
    }
}

/// Complex elements from their interleaved parts (real, imaginary, ...);
/// an odd trailing part is dropped (callers pass an even count).
pub fn complex_pairs<T: Copy>(parts: Vec<T>) -> Vec<num_complex::Complex<T>> {
    parts
        .chunks_exact(2)
        .filter_map(|c| match c {
            [re, im] => Some(num_complex::Complex::new(*re, *im)),
            _ => None,
        })
        .collect()
}

/// The interleaved parts (real, imaginary, ...) of complex elements.
pub fn complex_parts<T: Copy>(v: &[num_complex::Complex<T>]) -> Vec<T> {
    v.iter().flat_map(|z| [z.re, z.im]).collect()
}

/// A dense row-major host array.
#[derive(Debug, Clone, PartialEq)]
pub struct HostArray {
    shape: Vec<usize>,
    buf: Buffer,
}

/// Product of dimensions with overflow checking.
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        acc.checked_mul(d).ok_or_else(|| Error::Overflow {
            what: "array size",
            detail: format!("shape {}", crate::error::format_shape(shape)),
        })
    })
}

impl HostArray {
    /// Builds an array, checking that the buffer length matches the shape.
    pub fn new(shape: Vec<usize>, buf: Buffer) -> Result<HostArray> {
        let n = checked_size(&shape)?;
        if n != buf.len() {
            return Err(Error::InvalidArgument(format!(
                "buffer of {} elements does not fit shape {}",
                buf.len(),
                crate::error::format_shape(&shape)
            )));
        }
        Ok(HostArray { shape, buf })
    }

    /// Rank-0 array holding one scalar converted to `dtype`.
    pub fn scalar(value: crate::ir::Scalar, dtype: DType) -> Result<HostArray> {
        HostArray::new(Vec::new(), value.to_buffer(dtype, 1)?)
    }

    pub fn zeros(shape: Vec<usize>, dtype: DType) -> Result<HostArray> {
        let n = checked_size(&shape)?;
        HostArray::new(shape, Buffer::zeros(dtype, n)?)
    }

    /// [`Clone`], with the buffer copied fallibly ([`Buffer::try_clone`]).
    pub fn try_clone(&self, what: &str) -> Result<HostArray> {
        Ok(HostArray {
            shape: self.shape.clone(),
            buf: self.buf.try_clone(what)?,
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn dtype(&self) -> DType {
        self.buf.dtype()
    }

    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    pub fn into_buffer(mut self) -> Buffer {
        std::mem::replace(&mut self.buf, Buffer::Float0(0))
    }

    /// The elements, writable (the shape cannot change through this).
    #[doc(hidden)]
    pub fn buffer_mut(&mut self) -> &mut Buffer {
        &mut self.buf
    }

    /// Gives the array `shape`, which must hold as many elements; reuses
    /// the shape's allocation (the compiled executor recycles arrays).
    /// Whether the array has exactly `shape` (see [`same_dims`]).
    #[inline]
    pub(crate) fn has_shape(&self, shape: &[usize]) -> bool {
        same_dims(&self.shape, shape)
    }

    #[inline]
    pub(crate) fn set_shape(&mut self, shape: &[usize]) -> Result<()> {
        // The same shape again (a recycled array of a loop body, every
        // step) needs no check: the array already holds that many elements.
        if same_dims(&self.shape, shape) {
            return Ok(());
        }
        if checked_size(shape)? != self.buf.len() {
            return Err(Error::InvalidArgument(format!(
                "buffer of {} elements does not fit shape {}",
                self.buf.len(),
                crate::error::format_shape(shape)
            )));
        }
        self.shape.clear();
        self.shape.extend_from_slice(shape);
        Ok(())
    }

    pub fn size(&self) -> usize {
        self.buf.len()
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Same data, new shape of equal size.
    pub fn reshaped(self, shape: Vec<usize>) -> Result<HostArray> {
        HostArray::new(shape, self.into_buffer())
    }

    /// The abstract value (weak_type false: weakness lives on the Python
    /// Array and on literals, not on buffers).
    pub fn aval(&self) -> crate::ir::Aval {
        crate::ir::Aval::new(self.shape.clone(), self.dtype())
    }

    pub fn shared(self) -> Arc<HostArray> {
        Arc::new(self)
    }

    /// An array of `shape` owning `data` (row-major), whose length must be
    /// the shape's size.
    ///
    /// ```
    /// use microjax::{DType, HostArray};
    /// let a = HostArray::from_vec(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
    /// assert_eq!(a.dtype(), DType::F32);
    /// assert_eq!(a.as_slice::<f32>()?, &[1.0, 2.0, 3.0, 4.0]);
    /// assert!(a.as_slice::<f64>().is_err()); // not the array's element type
    /// assert!(HostArray::from_vec(vec![3], vec![1i32, 2]).is_err()); // 2 elements, shape [3]
    /// # Ok::<(), microjax::Error>(())
    /// ```
    pub fn from_vec<T: Element>(shape: Vec<usize>, data: Vec<T>) -> Result<HostArray> {
        HostArray::new(shape, T::wrap(data))
    }

    /// The elements (row-major) as a slice of `T`, which must be the array's
    /// element type (`f32` for float32, [`C32`] for complex64, ...):
    /// [`Error::DType`] otherwise. Float0 and key arrays have no element
    /// slice.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        T::slice(&self.buf).ok_or_else(|| {
            Error::dtype(
                "HostArray::as_slice",
                &[self.dtype()],
                format!("the array's elements are not {}", T::DTYPE),
            )
        })
    }

    /// A copy of the elements as a `Vec<T>` ([`HostArray::as_slice`]'s
    /// conditions; the copy is allocated fallibly).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        alloc::to_vec("HostArray::to_vec", self.as_slice::<T>()?)
    }
}

/// A large buffer goes back to the host buffer pool when its last
/// reference is dropped (`array::pool`): no one can observe its reuse.
impl Drop for HostArray {
    fn drop(&mut self) {
        if crate::array::pool::wants(crate::array::pool::buffer_bytes(&self.buf)) {
            crate::array::pool::give(std::mem::replace(&mut self.buf, Buffer::Float0(0)));
        }
    }
}

/// An element type of a [`Buffer`] variant: the type parameter of
/// [`HostArray::as_slice`], [`HostArray::to_vec`] and
/// [`HostArray::from_vec`]. Implemented for `bool`, the integer types,
/// `half::f16`, `half::bf16`, `f32`, `f64`, [`C32`] and [`C64`]; sealed, since no
/// other type has a buffer variant.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype whose buffers hold this element type.
    const DTYPE: DType;
    /// The elements of `b`, when it holds this type.
    fn slice(b: &Buffer) -> Option<&[Self]>;
    /// A buffer of this type owning `v`.
    fn wrap(v: Vec<Self>) -> Buffer;
    /// The elements of `b` as a vector, when it holds this type in owned
    /// storage (the same allocation, not a copy).
    fn unwrap(b: Buffer) -> Option<Vec<Self>>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! impl_element {
    ($($t:ident => $var:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$var;
            #[inline(always)]
            fn slice(b: &Buffer) -> Option<&[Self]> {
                match b {
                    Buffer::$var(v) => Some(v.as_slice()),
                    _ => None,
                }
            }
            #[inline(always)]
            fn wrap(v: Vec<Self>) -> Buffer {
                Buffer::$var(v.into())
            }
            fn unwrap(b: Buffer) -> Option<Vec<Self>> {
                match b {
                    Buffer::$var(v) => v.try_into_owned().ok(),
                    _ => None,
                }
            }
        }
    )*};
}
impl_element!(bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8,
    u16 => U16, u32 => U32, u64 => U64, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
    C32 => C64, C64 => C128);

macro_rules! from_vec {
    ($($t:ty => $var:ident),*) => {$(
        impl From<Vec<$t>> for Buffer {
            fn from(v: Vec<$t>) -> Buffer { Buffer::$var(v.into()) }
        }
        impl From<Elems<$t>> for Buffer {
            fn from(v: Elems<$t>) -> Buffer { Buffer::$var(v) }
        }
    )*};
}
from_vec!(bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64, C32 => C64,
    C64 => C128);
/// Whether two shapes are equal, by a plain loop: on the few axes of a
/// shape a `memcmp` call (what slice equality compiles to) costs more, and
/// the compiled executor compares the shapes of recycled arrays every loop
/// step.
#[inline]
pub(crate) fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
