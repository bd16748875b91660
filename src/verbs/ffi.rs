//! The only `unsafe` code in linkperf: thin owners of libibverbs objects.
//!
//! Each type owns one verbs object and frees it in `Drop`. Children hold an `Rc` of what they
//! were created from (a QP holds its PD, CQs and memory region; an MR holds its PD; a PD and a
//! CQ hold the device context), so whatever order values go out of scope in — including `?`
//! on an error path — a QP is destroyed before its CQs, an MR is deregistered before its PD is
//! deallocated, and the device is closed last. Posting checks every local offset against the
//! registered buffer, so safe code cannot make the device touch memory outside it.
#![allow(unsafe_code)]

use rdma_sys::*;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::CStr;
use std::io;
use std::os::raw::c_int;
use std::ptr;
use std::rc::Rc;

// `ibv_query_gid_ex` is an inline wrapper in verbs.h around this exported symbol
// (libibverbs 1.11, rdma-core 32+); rdma-sys does not bind underscore names.
#[link(name = "ibverbs")]
extern "C" {
    fn _ibv_query_gid_ex(
        context: *mut ibv_context,
        port_num: u32,
        gid_index: u32,
        entry: *mut ibv_gid_entry,
        flags: u32,
        entry_size: usize,
    ) -> c_int;
}

fn errno(call: &str, ret: c_int) -> io::Error {
    // Verbs calls return the errno value itself, or -1 with errno set.
    let e = if ret > 0 {
        io::Error::from_raw_os_error(ret)
    } else {
        io::Error::last_os_error()
    };
    io::Error::new(e.kind(), format!("{call}: {e}"))
}

/// The RDMA devices present, from `ibv_get_device_list`.
pub struct DeviceList {
    list: *mut *mut ibv_device,
    len: usize,
}

impl DeviceList {
    pub fn new() -> io::Result<DeviceList> {
        let mut n: c_int = 0;
        // SAFETY: `n` is a valid out pointer; a NULL result means failure with errno set.
        let list = unsafe { ibv_get_device_list(&mut n) };
        if list.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(DeviceList {
            list,
            len: n.max(0) as usize,
        })
    }

    fn device(&self, i: usize) -> *mut ibv_device {
        // SAFETY: `i < len`, and the list holds `len` valid device pointers.
        unsafe { *self.list.add(i) }
    }

    pub fn names(&self) -> Vec<String> {
        (0..self.len)
            .map(|i| {
                // SAFETY: a valid device; the name is a NUL-terminated string it owns.
                unsafe { CStr::from_ptr(ibv_get_device_name(self.device(i))) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    /// Opens the device called `name`; `Ok(None)` when there is none.
    pub fn open(&self, name: &str) -> io::Result<Option<Rc<Context>>> {
        let Some(i) = self.names().iter().position(|n| n == name) else {
            return Ok(None);
        };
        let dev = self.device(i);
        // SAFETY: a valid device from the live list.
        let ctx = unsafe { ibv_open_device(dev) };
        if ctx.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `dev` is valid; the fields are plain data. The context stays valid after the
        // list is freed (verbs allows freeing the list once the devices are opened).
        let (transport, guid) = unsafe { ((*dev).transport_type, ibv_get_device_guid(dev)) };
        Ok(Some(Rc::new(Context {
            ctx,
            name: name.to_string(),
            transport,
            guid,
        })))
    }
}

impl Drop for DeviceList {
    fn drop(&mut self) {
        // SAFETY: the list came from ibv_get_device_list and is freed once.
        unsafe { ibv_free_device_list(self.list) }
    }
}

/// An open device.
pub struct Context {
    ctx: *mut ibv_context,
    pub name: String,
    pub transport: i32,
    /// Node GUID, big-endian as the device reports it.
    pub guid: u64,
}

impl Context {
    pub fn query_device(&self) -> io::Result<ibv_device_attr> {
        // SAFETY: zeroed plain-data out struct; a valid context.
        let mut attr: ibv_device_attr = unsafe { std::mem::zeroed() };
        let ret = unsafe { ibv_query_device(self.ctx, &mut attr) };
        if ret != 0 {
            return Err(errno("ibv_query_device", ret));
        }
        Ok(attr)
    }

    pub fn query_port(&self, port: u8) -> io::Result<ibv_port_attr> {
        // SAFETY: as above; ___ibv_query_port is verbs.h's `ibv_query_port` macro.
        let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
        let ret = unsafe { ___ibv_query_port(self.ctx, port, &mut attr) };
        if ret != 0 {
            return Err(errno("ibv_query_port", ret));
        }
        Ok(attr)
    }

    /// GID `index` of `port` with its type code; `None` for an empty table slot.
    pub fn query_gid(&self, port: u8, index: u32) -> Option<([u8; 16], u32)> {
        // SAFETY: zeroed out struct of the size we pass; a valid context.
        let mut entry: ibv_gid_entry = unsafe { std::mem::zeroed() };
        let ret = unsafe {
            _ibv_query_gid_ex(
                self.ctx,
                port as u32,
                index,
                &mut entry,
                0,
                std::mem::size_of::<ibv_gid_entry>(),
            )
        };
        if ret != 0 {
            return None;
        }
        // SAFETY: `raw` is always a valid view of the 16-byte union.
        let raw = unsafe { entry.gid.raw };
        (raw != [0u8; 16]).then_some((raw, entry.gid_type))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every child holds an Rc of this context, so none is alive any more.
        unsafe { ibv_close_device(self.ctx) };
    }
}

/// A protection domain.
pub struct Pd {
    pd: *mut ibv_pd,
    _ctx: Rc<Context>,
}

impl Pd {
    pub fn new(ctx: &Rc<Context>) -> io::Result<Rc<Pd>> {
        // SAFETY: a valid context.
        let pd = unsafe { ibv_alloc_pd(ctx.ctx) };
        if pd.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Rc::new(Pd {
            pd,
            _ctx: ctx.clone(),
        }))
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // SAFETY: MRs and QPs hold an Rc of this PD, so none is alive any more.
        unsafe { ibv_dealloc_pd(self.pd) };
    }
}

/// A page-aligned buffer registered for local and remote access. The device may write into
/// it at any time, so Rust never holds a reference into it: reads and writes go through
/// volatile accesses and copies.
pub struct Mr {
    mr: *mut ibv_mr,
    buf: *mut u8,
    layout: Layout,
    _pd: Rc<Pd>,
}

impl Mr {
    pub fn new(pd: &Rc<Pd>, len: usize) -> io::Result<Rc<Mr>> {
        let layout = Layout::from_size_align(len.max(64), 4096)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: non-zero size.
        let buf = unsafe { alloc_zeroed(layout) };
        if buf.is_null() {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes"),
            ));
        }
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_ATOMIC;
        // SAFETY: `buf` is valid for `layout.size()` bytes until Drop deregisters it.
        let mr = unsafe { ibv_reg_mr(pd.pd, buf.cast(), layout.size(), access.0 as c_int) };
        if mr.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: allocated above with this layout, not registered.
            unsafe { dealloc(buf, layout) };
            return Err(e);
        }
        Ok(Rc::new(Mr {
            mr,
            buf,
            layout,
            _pd: pd.clone(),
        }))
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn addr(&self) -> u64 {
        self.buf as u64
    }

    pub fn lkey(&self) -> u32 {
        // SAFETY: a registered MR.
        unsafe { (*self.mr).lkey }
    }

    pub fn rkey(&self) -> u32 {
        // SAFETY: a registered MR.
        unsafe { (*self.mr).rkey }
    }

    fn check(&self, offset: usize, len: usize) {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len()),
            "access {offset}+{len} outside the {}-byte registered buffer",
            self.len()
        );
    }

    /// Writes `f(i)` to each byte of `offset..offset + len`.
    pub fn fill(&self, offset: usize, len: usize, f: impl Fn(usize) -> u8) {
        self.check(offset, len);
        for i in 0..len {
            // SAFETY: in bounds (checked above).
            unsafe { ptr::write_volatile(self.buf.add(offset + i), f(i)) };
        }
    }

    pub fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        self.check(offset, len);
        (0..len)
            // SAFETY: in bounds (checked above).
            .map(|i| unsafe { ptr::read_volatile(self.buf.add(offset + i)) })
            .collect()
    }

    pub fn byte(&self, offset: usize) -> u8 {
        self.check(offset, 1);
        // SAFETY: in bounds; volatile because the device writes it behind our back.
        unsafe { ptr::read_volatile(self.buf.add(offset)) }
    }

    pub fn set_byte(&self, offset: usize, v: u8) {
        self.check(offset, 1);
        // SAFETY: in bounds.
        unsafe { ptr::write_volatile(self.buf.add(offset), v) }
    }

    /// The 8-byte word at an 8-aligned offset, in host order (what atomics operate on).
    pub fn word(&self, offset: usize) -> u64 {
        self.check(offset, 8);
        assert_eq!(offset % 8, 0, "unaligned word offset {offset}");
        // SAFETY: in bounds and aligned (the buffer is page-aligned).
        unsafe { ptr::read_volatile(self.buf.add(offset).cast::<u64>()) }
    }

    pub fn set_word(&self, offset: usize, v: u64) {
        self.check(offset, 8);
        assert_eq!(offset % 8, 0, "unaligned word offset {offset}");
        // SAFETY: in bounds and aligned.
        unsafe { ptr::write_volatile(self.buf.add(offset).cast::<u64>(), v) }
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: QPs that could post from this buffer hold an Rc of it, so they are destroyed
        // and nothing is in flight; deregister first, then free the memory.
        unsafe {
            ibv_dereg_mr(self.mr);
            dealloc(self.buf, self.layout);
        }
    }
}

/// One work completion, copied out of the CQ.
#[derive(Debug, Clone, Copy, Default)]
pub struct Completion {
    pub wr_id: u64,
    pub status: u32,
    pub byte_len: u32,
}

impl Completion {
    pub fn ok(&self) -> bool {
        self.status == ibv_wc_status::IBV_WC_SUCCESS
    }

    pub fn status_text(&self) -> String {
        // SAFETY: returns a static string for any status value.
        unsafe { CStr::from_ptr(ibv_wc_status_str(self.status)) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A completion queue.
pub struct Cq {
    cq: *mut ibv_cq,
    _ctx: Rc<Context>,
}

const POLL_BATCH: usize = 16;

impl Cq {
    pub fn new(ctx: &Rc<Context>, entries: u32) -> io::Result<Rc<Cq>> {
        // SAFETY: a valid context; no completion channel.
        let cq = unsafe {
            ibv_create_cq(
                ctx.ctx,
                entries as c_int,
                ptr::null_mut(),
                ptr::null_mut(),
                0,
            )
        };
        if cq.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Rc::new(Cq {
            cq,
            _ctx: ctx.clone(),
        }))
    }

    /// Polls up to 16 completions into `out` (cleared first).
    pub fn poll(&self, out: &mut Vec<Completion>) -> io::Result<()> {
        out.clear();
        // SAFETY: ibv_wc is plain data; zeroed is a valid value.
        let mut wcs: [ibv_wc; POLL_BATCH] = unsafe { std::mem::zeroed() };
        let n = unsafe { ibv_poll_cq(self.cq, POLL_BATCH as i32, wcs.as_mut_ptr()) };
        if n < 0 {
            return Err(io::Error::other("ibv_poll_cq failed"));
        }
        out.extend(wcs[..n as usize].iter().map(|wc| Completion {
            wr_id: wc.wr_id,
            status: wc.status,
            byte_len: wc.byte_len,
        }));
        Ok(())
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: QPs using this CQ hold an Rc of it, so they are destroyed.
        unsafe { ibv_destroy_cq(self.cq) };
    }
}

/// What a send work request does.
#[derive(Debug, Clone, Copy)]
pub enum SendOp {
    Write {
        remote_addr: u64,
        rkey: u32,
    },
    Read {
        remote_addr: u64,
        rkey: u32,
    },
    Send,
    FetchAdd {
        remote_addr: u64,
        rkey: u32,
        add: u64,
    },
    CmpSwap {
        remote_addr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    },
}

/// How to reach the remote QP, for the move to RTR.
#[derive(Debug, Clone)]
pub struct RemoteQp {
    pub qpn: u32,
    pub psn: u32,
    pub lid: u16,
    /// Route with a GRH to this GID (RoCE always; InfiniBand across subnets).
    pub gid: Option<[u8; 16]>,
}

/// An RC queue pair posting from one registered buffer.
pub struct Qp {
    qp: *mut ibv_qp,
    mr: Rc<Mr>,
    _send_cq: Rc<Cq>,
    _recv_cq: Rc<Cq>,
    _pd: Rc<Pd>,
}

pub struct QpCaps {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_inline_data: u32,
}

impl Qp {
    pub fn new(
        pd: &Rc<Pd>,
        send_cq: &Rc<Cq>,
        recv_cq: &Rc<Cq>,
        mr: &Rc<Mr>,
        caps: &QpCaps,
    ) -> io::Result<Qp> {
        // SAFETY: zeroed init attributes are valid; the pointers are live objects.
        let mut init: ibv_qp_init_attr = unsafe { std::mem::zeroed() };
        init.send_cq = send_cq.cq;
        init.recv_cq = recv_cq.cq;
        init.qp_type = ibv_qp_type::IBV_QPT_RC;
        init.cap = ibv_qp_cap {
            max_send_wr: caps.max_send_wr,
            max_recv_wr: caps.max_recv_wr,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: caps.max_inline_data,
        };
        let qp = unsafe { ibv_create_qp(pd.pd, &mut init) };
        if qp.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Qp {
            qp,
            mr: mr.clone(),
            _send_cq: send_cq.clone(),
            _recv_cq: recv_cq.clone(),
            _pd: pd.clone(),
        })
    }

    pub fn qpn(&self) -> u32 {
        // SAFETY: a live QP.
        unsafe { (*self.qp).qp_num }
    }

    fn modify(&self, attr: &mut ibv_qp_attr, mask: ibv_qp_attr_mask) -> io::Result<()> {
        // SAFETY: a live QP and a filled attribute struct.
        let ret = unsafe { ibv_modify_qp(self.qp, attr, mask.0 as c_int) };
        if ret != 0 {
            return Err(errno("ibv_modify_qp", ret));
        }
        Ok(())
    }

    pub fn to_init(&self, port: u8) -> io::Result<()> {
        // SAFETY: zeroed is a valid ibv_qp_attr.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = port;
        a.qp_access_flags = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_ATOMIC)
            .0;
        self.modify(
            &mut a,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
                | ibv_qp_attr_mask::IBV_QP_PORT
                | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS,
        )
    }

    pub fn to_rtr(
        &self,
        port: u8,
        mtu_code: u32,
        sgid_index: u8,
        max_dest_rd_atomic: u8,
        remote: &RemoteQp,
    ) -> io::Result<()> {
        // SAFETY: zeroed is a valid ibv_qp_attr.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_RTR;
        a.path_mtu = mtu_code;
        a.dest_qp_num = remote.qpn;
        a.rq_psn = remote.psn;
        a.max_dest_rd_atomic = max_dest_rd_atomic;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = remote.lid;
        a.ah_attr.sl = 0;
        a.ah_attr.port_num = port;
        if let Some(gid) = remote.gid {
            a.ah_attr.is_global = 1;
            a.ah_attr.grh.dgid = ibv_gid { raw: gid };
            a.ah_attr.grh.sgid_index = sgid_index;
            a.ah_attr.grh.hop_limit = 64;
        }
        self.modify(
            &mut a,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_AV
                | ibv_qp_attr_mask::IBV_QP_PATH_MTU
                | ibv_qp_attr_mask::IBV_QP_DEST_QPN
                | ibv_qp_attr_mask::IBV_QP_RQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
                | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER,
        )
    }

    pub fn to_rts(&self, psn: u32, max_rd_atomic: u8) -> io::Result<()> {
        // SAFETY: zeroed is a valid ibv_qp_attr.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_RTS;
        // 4.096 µs × 2^14 ≈ 67 ms per try, 7 tries: a dead peer surfaces as an error
        // completion in about half a second instead of a hang.
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = psn;
        a.max_rd_atomic = max_rd_atomic;
        self.modify(
            &mut a,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_TIMEOUT
                | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
                | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
                | ibv_qp_attr_mask::IBV_QP_SQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC,
        )
    }

    /// Posts one send-queue work request over `offset..offset + len` of the QP's buffer.
    pub fn post_send(
        &self,
        op: SendOp,
        wr_id: u64,
        offset: usize,
        len: u32,
        signaled: bool,
        inline: bool,
    ) -> io::Result<()> {
        self.mr.check(offset, len as usize);
        let mut sge = ibv_sge {
            addr: self.mr.addr() + offset as u64,
            length: len,
            lkey: self.mr.lkey(),
        };
        // SAFETY: zeroed is a valid ibv_send_wr; the SGE points into the registered buffer,
        // which this QP keeps alive.
        let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = wr_id;
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        let mut flags = 0;
        if signaled {
            flags |= ibv_send_flags::IBV_SEND_SIGNALED.0;
        }
        if inline {
            flags |= ibv_send_flags::IBV_SEND_INLINE.0;
        }
        wr.send_flags = flags;
        match op {
            SendOp::Write { remote_addr, rkey } => {
                wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE;
                wr.wr.rdma = rdma_t { remote_addr, rkey };
            }
            SendOp::Read { remote_addr, rkey } => {
                wr.opcode = ibv_wr_opcode::IBV_WR_RDMA_READ;
                wr.wr.rdma = rdma_t { remote_addr, rkey };
            }
            SendOp::Send => wr.opcode = ibv_wr_opcode::IBV_WR_SEND,
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add,
            } => {
                wr.opcode = ibv_wr_opcode::IBV_WR_ATOMIC_FETCH_AND_ADD;
                wr.wr.atomic = atomic_t {
                    remote_addr,
                    compare_add: add,
                    swap: 0,
                    rkey,
                };
            }
            SendOp::CmpSwap {
                remote_addr,
                rkey,
                compare,
                swap,
            } => {
                wr.opcode = ibv_wr_opcode::IBV_WR_ATOMIC_CMP_AND_SWP;
                wr.wr.atomic = atomic_t {
                    remote_addr,
                    compare_add: compare,
                    swap,
                    rkey,
                };
            }
        }
        let mut bad: *mut ibv_send_wr = ptr::null_mut();
        // SAFETY: a live QP and a well-formed WR; the provider copies it before returning.
        let ret = unsafe { ibv_post_send(self.qp, &mut wr, &mut bad) };
        if ret != 0 {
            return Err(errno("ibv_post_send", ret));
        }
        Ok(())
    }

    /// Posts one receive over `offset..offset + len` of the QP's buffer.
    pub fn post_recv(&self, wr_id: u64, offset: usize, len: u32) -> io::Result<()> {
        self.mr.check(offset, len as usize);
        let mut sge = ibv_sge {
            addr: self.mr.addr() + offset as u64,
            length: len,
            lkey: self.mr.lkey(),
        };
        let mut wr = ibv_recv_wr {
            wr_id,
            next: ptr::null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad: *mut ibv_recv_wr = ptr::null_mut();
        // SAFETY: a live QP and a well-formed WR into the registered buffer.
        let ret = unsafe { ibv_post_recv(self.qp, &mut wr, &mut bad) };
        if ret != 0 {
            return Err(errno("ibv_post_recv", ret));
        }
        Ok(())
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        // SAFETY: destroying the QP flushes its work requests; the MR, CQs and PD it used are
        // released only after this (the Rc fields drop after this body runs).
        unsafe { ibv_destroy_qp(self.qp) };
    }
}
