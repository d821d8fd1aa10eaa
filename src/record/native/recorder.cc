// perfpoke_record: the native half of `perfpoke record`.
//
// Opens perf events with perf_event_open(2) on a list of CPUs, maps one ring
// buffer per event and CPU (as perf 6.1 does), and drains the rings from a
// native thread woken by epoll. Each pass over all rings becomes one chunk
// handed to JavaScript through a thread-safe function, followed by a
// PERF_RECORD_FINISHED_ROUND so the file can be sorted by time later
// (perf's record__mmap_read_all + the round rule in ordered-events.c).
//
// The thread never waits for JavaScript: chunks queue without bound, so a
// slow writer costs memory, never records. Loss can only happen in the
// kernel (ring full) and shows up as PERF_RECORD_LOST, which we count.
//
// JS API (see src/record/native.ts for the typed view):
//   new Recorder({ cpus: number[], attrs: Buffer[], pages: number, pollMs: number,
//                  sampleTimeOffset?: number, pids?: number[], enable?: boolean },
//                onChunk(chunk: Buffer | null, final: boolean))
//                                pids: the tasks to follow (default [-1] = every task
//                                on each CPU); one event per CPU and task, as perf opens
//                                them, the tasks of one CPU sharing the first one's ring
//                                (PERF_EVENT_IOC_SET_OUTPUT). enable: false leaves the
//                                events to attr.enable_on_exec (perf's workload mode).
//   ids(): bigint[][]            ids[attrIndex][cpuIndex * pids + pidIndex] (PERF_EVENT_IOC_ID)
//   start(fd?, offset?)          enable all events, start the reader thread. With fd,
//                                the thread appends to that file at offset itself (one
//                                pwritev per pass, like perf) and onChunk only gets the
//                                final call; offset -1 streams to fd with writev instead
//                                (a pipe: no seeks). Without fd, every pass is a chunk.
//   stop()                       disable, final drain, join; final chunk follows
//   stats(): { bytes, records, lost, lostRecords, passes, wakeups, types: number[],
//              fileEnd, writeErrno, firstSample?, lastSample?, ended }
//                                ended: every followed task exited (all fds hung up);
//                                the thread then made its final pass by itself.
//   Recorder.bpfPrograms(): { progs: BpfProg[], errno: number }   the BPF programs loaded
//                                now, from bpf(2) (perf's perf_event__synthesize_bpf_events).
#include <napi.h>

#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bpf-progs.h"
#include "ring-io.h"

namespace {

using perfpoke_ring::errnoText;
using perfpoke_ring::perfEventOpen;
using perfpoke_ring::Ring;
using perfpoke_ring::RingCopy;
using perfpoke_ring::WriteAll;

constexpr uint32_t kFinishedRound = 68;  // PERF_RECORD_FINISHED_ROUND (perf user type)
constexpr int kTypeSlots = 128;

struct Chunk {
  std::vector<uint8_t> bytes;
  bool final = false;
};

class Recorder : public Napi::ObjectWrap<Recorder> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports) {
    Napi::Function f = DefineClass(env, "Recorder",
                                   {InstanceMethod("ids", &Recorder::Ids), InstanceMethod("start", &Recorder::Start),
                                    InstanceMethod("stop", &Recorder::Stop), InstanceMethod("stats", &Recorder::Stats),
                                    InstanceMethod("close", &Recorder::Close),
                                    StaticMethod("bpfPrograms", &perfpoke_bpf::BpfPrograms)});
    exports.Set("Recorder", f);
    return exports;
  }

  explicit Recorder(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Recorder>(info) {
    Napi::Env env = info.Env();
    for (auto& t : types_) t = 0;
    if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
      Napi::TypeError::New(env, "Recorder(options, onChunk)").ThrowAsJavaScriptException();
      return;
    }
    Napi::Object o = info[0].As<Napi::Object>();
    Napi::Array cpus = o.Get("cpus").As<Napi::Array>();
    Napi::Array attrs = o.Get("attrs").As<Napi::Array>();
    uint32_t pages = o.Get("pages").As<Napi::Number>().Uint32Value();
    if (o.Has("pollMs")) pollMs_ = o.Get("pollMs").As<Napi::Number>().Int32Value();
    if (o.Has("sampleTimeOffset")) sampleTimeOffset_ = o.Get("sampleTimeOffset").As<Napi::Number>().Int32Value();
    if (o.Has("enable")) enableOnStart_ = o.Get("enable").ToBoolean().Value();
    std::vector<int> pids;
    if (o.Has("pids") && o.Get("pids").IsArray()) {
      Napi::Array pa = o.Get("pids").As<Napi::Array>();
      for (uint32_t i = 0; i < pa.Length(); i++) pids.push_back(pa.Get(i).As<Napi::Number>().Int32Value());
    }
    if (pids.empty()) pids.push_back(-1);

    if (pages == 0 || (pages & (pages - 1)) != 0) {
      Napi::RangeError::New(env, "pages must be a power of two").ThrowAsJavaScriptException();
      return;
    }
    long pageSize = sysconf(_SC_PAGESIZE);
    size_t nAttr = attrs.Length();
    fds_.assign(nAttr, std::vector<int>());
    ids_.assign(nAttr, std::vector<uint64_t>());

    for (uint32_t ci = 0; ci < cpus.Length(); ci++) {
      int cpu = cpus.Get(ci).As<Napi::Number>().Int32Value();
      for (size_t ai = 0; ai < nAttr; ai++) {
        Napi::Buffer<uint8_t> b = attrs.Get(ai).As<Napi::Buffer<uint8_t>>();
        // The attr comes encoded by JavaScript (src/abi/event-attr.ts), so the
        // bits this build's <linux/perf_event.h> may not name yet (text_poke is
        // bit 33, Linux 5.9) still reach the kernel: we pass raw bytes and the
        // kernel reads attr.size of them.
        alignas(8) uint8_t raw[512];
        memset(raw, 0, sizeof raw);
        memcpy(raw, b.Data(), std::min(b.Length(), sizeof raw));
        int ringFd = -1;
        for (int pid : pids) {
          long fd = perfEventOpen(reinterpret_cast<perf_event_attr*>(raw), pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
          if (fd < 0) {
            int e = errno;
            std::string who = pid == -1 ? "" : "pid " + std::to_string(pid) + ", ";
            Fail(env, "perf_event_open(" + who + "cpu " + std::to_string(cpu) + ", event " + std::to_string(ai) +
                          "): " + errnoText(e));
            return;
          }
          fds_[ai].push_back(static_cast<int>(fd));
          allFds_.push_back({static_cast<int>(fd), static_cast<uint32_t>(rings_.size())});
          uint64_t id = 0;
          if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) < 0) {
            int e = errno;
            Fail(env, "PERF_EVENT_IOC_ID: " + errnoText(e));
            return;
          }
          ids_[ai].push_back(id);
          if (ringFd >= 0) {
            // further tasks on this CPU write into the first one's ring, as perf's per-CPU mmaps
            if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, ringFd) < 0) {
              int e = errno;
              Fail(env, "PERF_EVENT_IOC_SET_OUTPUT (pid " + std::to_string(pid) + "): " + errnoText(e));
              return;
            }
            continue;
          }
          ringFd = static_cast<int>(fd);
          // One ring per event and CPU, as perf 6.1 does for its sampling and
          // tracking events: side-band records do not compete with samples for
          // space, and each event gets the full -m pages.
          Ring ring;
          ring.cpu = cpu;
          ring.fd = ringFd;
          ring.mapLen = static_cast<size_t>(pageSize) * (pages + 1);
          void* p = mmap(nullptr, ring.mapLen, PROT_READ | PROT_WRITE, MAP_SHARED, ring.fd, 0);
          if (p == MAP_FAILED) {
            int e = errno;
            Fail(env, "mmap of the ring buffer (cpu " + std::to_string(cpu) + ", " + std::to_string(pages) +
                          " pages): " + errnoText(e) + "; try a smaller -m");
            return;
          }
          ring.base = static_cast<uint8_t*>(p);
          auto* pc = reinterpret_cast<perf_event_mmap_page*>(ring.base);
          // data_offset/data_size exist since Linux 4.1; fall back to one page in.
          ring.dataOffset = pc->data_offset ? pc->data_offset : static_cast<uint64_t>(pageSize);
          ring.dataSize = pc->data_size ? pc->data_size : static_cast<uint64_t>(pageSize) * pages;
          rings_.push_back(ring);
        }
      }
    }

    wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epollFd_ = epoll_create1(EPOLL_CLOEXEC);
    if (wakeFd_ < 0 || epollFd_ < 0) {
      Fail(env, "eventfd/epoll_create1: " + errnoText(errno));
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = UINT32_MAX;
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, wakeFd_, &ev);
    // Every fd is watched, not only the ring owners: a task event hangs up
    // (EPOLLHUP) once its task and all tasks it was inherited by have exited,
    // and recording of tasks ends when every fd did (perf's fdarray__filter).
    for (uint32_t i = 0; i < allFds_.size(); i++) {
      epoll_event re{};
      re.events = EPOLLIN;
      re.data.u32 = i;
      epoll_ctl(epollFd_, EPOLL_CTL_ADD, allFds_[i].fd, &re);
    }
    liveFds_ = allFds_.size();
    followsTasks_ = pids.front() != -1;
    tsfn_ = Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "perfpoke-record", 0, 1);
    tsfnLive_ = true;
  }

  ~Recorder() override { Teardown(); }

 private:
  void Fail(Napi::Env env, const std::string& msg) {
    Teardown();
    Napi::Error::New(env, msg).ThrowAsJavaScriptException();
  }

  void Teardown() {
    if (thread_.joinable()) {
      stop_.store(true);
      uint64_t one = 1;
      (void)!write(wakeFd_, &one, sizeof one);
      thread_.join();
    }
    for (auto& r : rings_) {
      if (r.base) munmap(r.base, r.mapLen);
      r.base = nullptr;
    }
    rings_.clear();
    allFds_.clear();
    for (auto& v : fds_)
      for (int fd : v) close(fd);
    fds_.clear();
    if (wakeFd_ >= 0) close(wakeFd_);
    if (epollFd_ >= 0) close(epollFd_);
    wakeFd_ = epollFd_ = -1;
    if (tsfnLive_) {
      tsfn_.Release();
      tsfnLive_ = false;
    }
  }

  void ForEachFd(unsigned long req) {
    for (auto& v : fds_)
      for (int fd : v) ioctl(fd, req, 0);
  }

  // Copy everything between data_tail and data_head out of one ring, then
  // hand the space back. data_head only ever sits on a record boundary, so a
  // bulk copy (split in two where it wraps) never cuts a record.
  void DrainRing(Ring& r, std::vector<uint8_t>& out) {
    auto* pc = reinterpret_cast<perf_event_mmap_page*>(r.base);
    uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = pc->data_tail;
    if (head == tail) return;
    uint64_t len = head - tail;
    if (len > r.dataSize) len = r.dataSize;  // cannot happen unless the kernel overwrote; stay in bounds
    const uint8_t* data = r.base + r.dataOffset;
    uint64_t mask = r.dataSize - 1;
    uint64_t start = tail & mask;
    size_t at = out.size();
    out.resize(at + len);
    uint64_t first = std::min(len, r.dataSize - start);
    memcpy(out.data() + at, data + start, first);
    if (first < len) memcpy(out.data() + at + first, data, len - first);
    CountRing(r, tail, tail + len);
    __atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
  }

  // Count records in place (a header may straddle the wrap, hence RingCopy).
  void CountRing(const Ring& r, uint64_t tail, uint64_t head) {
    for (uint64_t pos = tail; pos + sizeof(perf_event_header) <= head;) {
      perf_event_header h;
      RingCopy(r, pos, &h, sizeof h);
      if (h.size < sizeof h || pos + h.size > head) break;
      records_.fetch_add(1, std::memory_order_relaxed);
      types_[h.type < kTypeSlots ? h.type : kTypeSlots - 1].fetch_add(1, std::memory_order_relaxed);
      if (h.type == PERF_RECORD_SAMPLE && sampleTimeOffset_ >= 8 && h.size >= sampleTimeOffset_ + 8) {
        uint64_t t;
        RingCopy(r, pos + sampleTimeOffset_, &t, 8);
        if (t < firstSample_) firstSample_ = t;
        if (t > lastSample_) lastSample_ = t;
      }
      uint64_t n = 0;
      if (h.type == PERF_RECORD_LOST && h.size >= 24) {
        RingCopy(r, pos + 16, &n, 8);
      } else if (h.type == PERF_RECORD_LOST_SAMPLES && h.size >= 16) {
        RingCopy(r, pos + 8, &n, 8);
      }
      if (h.type == PERF_RECORD_LOST || h.type == PERF_RECORD_LOST_SAMPLES) {
        lost_.fetch_add(n, std::memory_order_relaxed);
        lostRecords_.fetch_add(1, std::memory_order_relaxed);
      }
      pos += h.size;
    }
  }

  // Direct mode (perf's way): write each ring's new bytes straight from the
  // mapping to the output file with one pwritev per pass, then hand the space
  // back. One copy (kernel -> page cache), no JavaScript on the hot path.
  void PassToFile() {
    std::vector<iovec> iov;
    std::vector<uint64_t> heads(rings_.size());
    uint64_t total = 0;
    for (size_t i = 0; i < rings_.size(); i++) {
      Ring& r = rings_[i];
      auto* pc = reinterpret_cast<perf_event_mmap_page*>(r.base);
      uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
      uint64_t tail = pc->data_tail;
      heads[i] = head;
      if (head == tail) continue;
      uint64_t len = std::min(head - tail, r.dataSize);
      uint8_t* data = r.base + r.dataOffset;
      uint64_t start = tail & (r.dataSize - 1);
      uint64_t first = std::min(len, r.dataSize - start);
      iov.push_back({data + start, first});
      if (first < len) iov.push_back({data, len - first});
      CountRing(r, tail, head);
      total += len;
    }
    if (total == 0) return;
    static perf_event_header fr{kFinishedRound, 0, sizeof(perf_event_header)};
    iov.push_back({&fr, sizeof fr});
    total += sizeof fr;
    if (writeErrno_ == 0) outPos_ += WriteAll(outFd_, iov, stream_ ? -1 : static_cast<int64_t>(outPos_), &writeErrno_);
    for (size_t i = 0; i < rings_.size(); i++) {
      auto* pc = reinterpret_cast<perf_event_mmap_page*>(rings_[i].base);
      __atomic_store_n(&pc->data_tail, heads[i], __ATOMIC_RELEASE);
    }
    bytes_.fetch_add(total, std::memory_order_relaxed);
    passes_.fetch_add(1, std::memory_order_relaxed);
  }

  // One pass over every ring; a non-empty pass ends with FINISHED_ROUND.
  void Pass(bool final) {
    if (outFd_ >= 0) {
      PassToFile();
      if (final) {
        auto* chunk = new Chunk();
        chunk->final = true;
        if (tsfn_.NonBlockingCall(chunk, Deliver) != napi_ok) delete chunk;
      }
      return;
    }
    auto* chunk = new Chunk();
    for (auto& r : rings_) DrainRing(r, chunk->bytes);
    if (!chunk->bytes.empty()) {
      perf_event_header fr{kFinishedRound, 0, sizeof(perf_event_header)};
      const uint8_t* fp = reinterpret_cast<const uint8_t*>(&fr);
      chunk->bytes.insert(chunk->bytes.end(), fp, fp + sizeof fr);
      bytes_.fetch_add(chunk->bytes.size(), std::memory_order_relaxed);
      passes_.fetch_add(1, std::memory_order_relaxed);
    }
    chunk->final = final;
    if (chunk->bytes.empty() && !final) {
      delete chunk;
      return;
    }
    napi_status s = tsfn_.NonBlockingCall(chunk, Deliver);
    if (s != napi_ok) delete chunk;
  }

  static void Deliver(Napi::Env env, Napi::Function cb, Chunk* chunk) {
    if (env != nullptr && cb != nullptr) {
      Napi::Value buf = env.Null();
      if (!chunk->bytes.empty()) buf = Napi::Buffer<uint8_t>::Copy(env, chunk->bytes.data(), chunk->bytes.size());
      cb.Call({buf, Napi::Boolean::New(env, chunk->final)});
    }
    delete chunk;
  }

  void Loop() {
    std::vector<epoll_event> evs(allFds_.size() + 1);
    while (!stop_.load()) {
      int n = epoll_wait(epollFd_, evs.data(), static_cast<int>(evs.size()), pollMs_);
      if (n < 0 && errno != EINTR) break;
      if (n > 0) wakeups_.fetch_add(1, std::memory_order_relaxed);
      for (int i = 0; i < n; i++) {
        uint32_t k = evs[i].data.u32;
        if (k == UINT32_MAX || (evs[i].events & (EPOLLHUP | EPOLLERR)) == 0) continue;
        epoll_ctl(epollFd_, EPOLL_CTL_DEL, allFds_[k].fd, nullptr);  // level-triggered HUP would spin
        if (liveFds_ > 0) liveFds_--;
      }
      Pass(false);
      if (followsTasks_ && liveFds_ == 0) {
        ended_.store(true);
        break;
      }
    }
    Pass(true);
  }

  Napi::Value Ids(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array all = Napi::Array::New(env, ids_.size());
    for (size_t a = 0; a < ids_.size(); a++) {
      Napi::Array row = Napi::Array::New(env, ids_[a].size());
      for (size_t c = 0; c < ids_[a].size(); c++) row.Set(c, Napi::BigInt::New(env, ids_[a][c]));
      all.Set(a, row);
    }
    return all;
  }

  Napi::Value Start(const Napi::CallbackInfo& info) {
    if (started_ || !tsfnLive_) {
      Napi::Error::New(info.Env(), "recorder already started or closed").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    if (info.Length() >= 2 && info[0].IsNumber() && info[1].IsNumber()) {
      outFd_ = info[0].As<Napi::Number>().Int32Value();
      int64_t at = info[1].As<Napi::Number>().Int64Value();
      stream_ = at < 0;
      outPos_ = stream_ ? 0 : static_cast<uint64_t>(at);
    }
    started_ = true;
    if (enableOnStart_) ForEachFd(PERF_EVENT_IOC_ENABLE);
    thread_ = std::thread([this] { Loop(); });
    return info.Env().Undefined();
  }

  // Disable first so nothing new arrives, then let the thread make its final
  // pass. Joining here is safe: the thread never blocks on JavaScript.
  Napi::Value Stop(const Napi::CallbackInfo& info) {
    if (!started_ || stopped_) return info.Env().Undefined();
    stopped_ = true;
    ForEachFd(PERF_EVENT_IOC_DISABLE);
    stop_.store(true);
    uint64_t one = 1;
    (void)!write(wakeFd_, &one, sizeof one);
    if (thread_.joinable()) thread_.join();
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Teardown();
    return info.Env().Undefined();
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("bytes", Napi::Number::New(env, static_cast<double>(bytes_.load())));
    o.Set("records", Napi::Number::New(env, static_cast<double>(records_.load())));
    o.Set("lost", Napi::Number::New(env, static_cast<double>(lost_.load())));
    o.Set("lostRecords", Napi::Number::New(env, static_cast<double>(lostRecords_.load())));
    o.Set("passes", Napi::Number::New(env, static_cast<double>(passes_.load())));
    o.Set("wakeups", Napi::Number::New(env, static_cast<double>(wakeups_.load())));
    if (lastSample_ != 0) {
      o.Set("firstSample", Napi::BigInt::New(env, firstSample_));
      o.Set("lastSample", Napi::BigInt::New(env, lastSample_));
    }
    o.Set("fileEnd", Napi::Number::New(env, static_cast<double>(outPos_)));
    o.Set("writeErrno", Napi::Number::New(env, writeErrno_));
    o.Set("ended", Napi::Boolean::New(env, ended_.load()));
    Napi::Array t = Napi::Array::New(env, kTypeSlots);
    for (int i = 0; i < kTypeSlots; i++) t.Set(i, Napi::Number::New(env, static_cast<double>(types_[i].load())));
    o.Set("types", t);
    return o;
  }

  struct WatchedFd {
    int fd;
    uint32_t ring;  // index in rings_ of the ring it writes into
  };
  std::vector<Ring> rings_;
  std::vector<WatchedFd> allFds_;
  size_t liveFds_ = 0;         // fds not hung up yet (reader thread only)
  bool followsTasks_ = false;  // opened for tasks (pids), not CPU wide: ends when they all exit
  bool enableOnStart_ = true;
  bool stream_ = false;        // direct mode to a pipe: writev, no offsets
  std::atomic<bool> ended_{false};
  std::vector<std::vector<int>> fds_;
  std::vector<std::vector<uint64_t>> ids_;
  int wakeFd_ = -1;
  int epollFd_ = -1;
  int pollMs_ = 100;
  int sampleTimeOffset_ = -1;  // where SAMPLE records keep TIME (all sampling events alike), or -1
  uint64_t firstSample_ = UINT64_MAX, lastSample_ = 0;  // reader thread only until joined
  int outFd_ = -1;          // direct mode: the reader thread writes here
  uint64_t outPos_ = 0;     // next file offset (reader thread only until joined)
  int writeErrno_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  bool tsfnLive_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Napi::ThreadSafeFunction tsfn_;
  std::atomic<uint64_t> bytes_{0}, records_{0}, lost_{0}, lostRecords_{0}, passes_{0}, wakeups_{0};
  std::atomic<uint64_t> types_[kTypeSlots];
};

Napi::Object InitAll(Napi::Env env, Napi::Object exports) { return Recorder::Init(env, exports); }

}  // namespace

NODE_API_MODULE(perfpoke_record, InitAll)
