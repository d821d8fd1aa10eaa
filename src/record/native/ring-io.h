// Rings and output for perfpoke_record (included once, by recorder.cc, so
// binding.gyp keeps one source): a mapped perf ring, reading across its wrap,
// and writing a pass to the output, a file at an offset or a pipe.
#pragma once
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace perfpoke_ring {

struct Ring {
  int cpu = -1;
  int fd = -1;  // the event whose buffer this is
  uint8_t* base = nullptr;
  size_t mapLen = 0;
  uint64_t dataSize = 0;
  uint64_t dataOffset = 0;
};

inline long perfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

inline std::string errnoText(int e) {
  return std::string(strerror(e)) + " (errno " + std::to_string(e) + ")";
}

// Bytes [pos, pos+n) of a ring's data area, following the wrap.
inline void RingCopy(const Ring& r, uint64_t pos, void* dst, uint64_t n) {
  const uint8_t* data = r.base + r.dataOffset;
  uint64_t start = pos & (r.dataSize - 1);
  uint64_t first = std::min(n, r.dataSize - start);
  memcpy(dst, data + start, first);
  if (first < n) memcpy(static_cast<uint8_t*>(dst) + first, data, n - first);
}

// Write all of iov: with pwritev at `at` in a file, or with writev when at is
// -1 (a pipe: no seeks; a non-blocking pipe that is full is waited for, as
// Node may have made stdout one). Returns the bytes written; on failure sets
// *err (ENOSPC for a write of 0) and stops.
inline uint64_t WriteAll(int fd, std::vector<iovec>& iov, int64_t at, int* err) {
  size_t k = 0;
  uint64_t done = 0;
  while (k < iov.size()) {
    int cnt = static_cast<int>(std::min<size_t>(iov.size() - k, IOV_MAX));
    ssize_t n = at < 0 ? writev(fd, iov.data() + k, cnt) : pwritev(fd, iov.data() + k, cnt, at + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pf{fd, POLLOUT, 0};
      (void)poll(&pf, 1, 1000);
      continue;
    }
    if (n <= 0) {
      *err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<uint64_t>(n);
    // skip the iovecs written, trim a partly written one
    while (k < iov.size() && static_cast<uint64_t>(n) >= iov[k].iov_len) {
      n -= static_cast<ssize_t>(iov[k].iov_len);
      k++;
    }
    if (k < iov.size() && n > 0) {
      iov[k].iov_base = static_cast<uint8_t*>(iov[k].iov_base) + n;
      iov[k].iov_len -= static_cast<size_t>(n);
    }
  }
  return done;
}

}  // namespace perfpoke_ring
