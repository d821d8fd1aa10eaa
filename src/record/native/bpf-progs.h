// The BPF half of perfpoke_record: Recorder.bpfPrograms() lists the BPF
// programs loaded now, with what perf's perf_event__synthesize_bpf_events
// (tools/perf/util/bpf-event.c) reads of each, for src/record/synthesize-bpf.ts.
// A header (included once, by recorder.cc) so binding.gyp keeps one source.
#pragma once
#include <napi.h>

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace perfpoke_bpf {

inline long SysBpf(int cmd, bpf_attr* a) { return syscall(SYS_bpf, cmd, a, sizeof(*a)); }

// bpf_prog_info of one program with the arrays perf asks for (its
// get_bpf_prog_info_linear): jited_ksyms, jited_func_lens, prog_tags,
// func_info; the counts come from a first call, the arrays from a second.
inline Napi::Value ProgInfo(Napi::Env env, int fd, int* err) {
  bpf_prog_info info{};
  bpf_attr q{};
  q.info.bpf_fd = static_cast<uint32_t>(fd);
  q.info.info_len = sizeof info;
  q.info.info = reinterpret_cast<uintptr_t>(&info);
  if (SysBpf(BPF_OBJ_GET_INFO_BY_FD, &q) < 0) {
    *err = errno;
    return env.Null();
  }
  std::vector<uint64_t> ksyms(info.nr_jited_ksyms);
  std::vector<uint32_t> lens(info.nr_jited_func_lens);
  std::vector<uint8_t> tags(static_cast<size_t>(info.nr_prog_tags) * BPF_TAG_SIZE);
  std::vector<uint8_t> finfo(static_cast<size_t>(info.nr_func_info) * info.func_info_rec_size);
  bpf_prog_info full{};
  full.nr_jited_ksyms = info.nr_jited_ksyms;
  full.jited_ksyms = reinterpret_cast<uintptr_t>(ksyms.data());
  full.nr_jited_func_lens = info.nr_jited_func_lens;
  full.jited_func_lens = reinterpret_cast<uintptr_t>(lens.data());
  full.nr_prog_tags = info.nr_prog_tags;
  full.prog_tags = reinterpret_cast<uintptr_t>(tags.data());
  full.nr_func_info = info.nr_func_info;
  full.func_info_rec_size = info.func_info_rec_size;
  full.func_info = reinterpret_cast<uintptr_t>(finfo.data());
  q.info.info_len = sizeof full;
  q.info.info = reinterpret_cast<uintptr_t>(&full);
  if (SysBpf(BPF_OBJ_GET_INFO_BY_FD, &q) < 0) {
    *err = errno;
    return env.Null();
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, full.id));
  o.Set("type", Napi::Number::New(env, full.type));
  o.Set("name", Napi::String::New(env, std::string(full.name, strnlen(full.name, sizeof full.name))));
  o.Set("tag", Napi::Buffer<uint8_t>::Copy(env, full.tag, BPF_TAG_SIZE));
  size_t nk = std::min<size_t>(full.nr_jited_ksyms, ksyms.size());
  Napi::Array ka = Napi::Array::New(env, nk);
  for (size_t i = 0; i < nk; i++) ka.Set(i, Napi::BigInt::New(env, ksyms[i]));
  o.Set("jitedKsyms", ka);
  size_t nl = std::min<size_t>(full.nr_jited_func_lens, lens.size());
  Napi::Array la = Napi::Array::New(env, nl);
  for (size_t i = 0; i < nl; i++) la.Set(i, Napi::Number::New(env, lens[i]));
  o.Set("jitedFuncLens", la);
  o.Set("progTags", Napi::Buffer<uint8_t>::Copy(env, tags.data(), tags.size()));
  o.Set("btfId", Napi::Number::New(env, full.btf_id));
  o.Set("funcInfoRecSize", Napi::Number::New(env, full.func_info_rec_size));
  o.Set("funcInfo", Napi::Buffer<uint8_t>::Copy(env, finfo.data(), finfo.size()));
  if (full.btf_id != 0) {
    // the raw BTF (perf: btf__load_from_kernel_by_id) names the sub-programs
    bpf_attr g{};
    g.btf_id = full.btf_id;
    long bfd = SysBpf(BPF_BTF_GET_FD_BY_ID, &g);
    if (bfd >= 0) {
      bpf_btf_info bi{};
      bpf_attr bq{};
      bq.info.bpf_fd = static_cast<uint32_t>(bfd);
      bq.info.info_len = sizeof bi;
      bq.info.info = reinterpret_cast<uintptr_t>(&bi);
      if (SysBpf(BPF_OBJ_GET_INFO_BY_FD, &bq) == 0 && bi.btf_size > 0) {
        std::vector<uint8_t> raw(bi.btf_size);
        bpf_btf_info b2{};
        b2.btf = reinterpret_cast<uintptr_t>(raw.data());
        b2.btf_size = bi.btf_size;
        bq.info.info_len = sizeof b2;
        bq.info.info = reinterpret_cast<uintptr_t>(&b2);
        if (SysBpf(BPF_OBJ_GET_INFO_BY_FD, &bq) == 0)
          o.Set("btf", Napi::Buffer<uint8_t>::Copy(env, raw.data(), std::min<size_t>(raw.size(), b2.btf_size)));
      }
      close(static_cast<int>(bfd));
    }
  }
  return o;
}

// Walk the loaded programs as perf's perf_event__synthesize_bpf_events does:
// GET_NEXT_ID, GET_FD_BY_ID (a program unloaded meanwhile is skipped), info.
// errno is that of the call that ended the walk early (0: walked them all).
inline Napi::Value BpfPrograms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array progs = Napi::Array::New(env);
  int err = 0;
  uint32_t id = 0;
  for (;;) {
    bpf_attr a{};
    a.start_id = id;
    if (SysBpf(BPF_PROG_GET_NEXT_ID, &a) < 0) {
      if (errno != ENOENT) err = errno;
      break;
    }
    id = a.next_id;
    bpf_attr g{};
    g.prog_id = id;
    long fd = SysBpf(BPF_PROG_GET_FD_BY_ID, &g);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      err = errno;
      break;
    }
    Napi::Value p = ProgInfo(env, static_cast<int>(fd), &err);
    close(static_cast<int>(fd));
    if (p.IsNull()) break;
    progs.Set(progs.Length(), p);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("progs", progs);
  out.Set("errno", Napi::Number::New(env, err));
  return out;
}

}  // namespace perfpoke_bpf
