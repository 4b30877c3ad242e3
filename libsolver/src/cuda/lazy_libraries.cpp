// cuBLAS and cuSOLVER loaded on first use: libbatchsolve defines every cublas*/cusolver* function it
// calls as a two-instruction trampoline (hidden, so the applications' own cuBLAS is not affected).
// Each jumps through a slot that first points to a resolver: it dlopens the library (once), looks the
// function up, stores it in the slot and jumps there with the caller's registers intact. Linked
// directly, the two libraries (with cuBLASLt, cuSPARSE and nvJitLink behind them) were mapped and
// relocated before main of every program, about 50 ms of start-up (measured on the 2-core build
// machine, page cache warm), also in programs that never call them. x86-64 Linux only; elsewhere the
// libraries are linked as before (libsolver/CMakeLists.txt).
//
// lazy_libraries.def lists every function the toolkit's two libraries export
// (scripts/lazy_libraries_def.sh writes it), so a new call needs no change here; a function missing
// from a newer toolkit's list makes the programs fail to link ("undefined reference"): regenerate it.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>

#include <cublas_api.h>
#include <cusolverDn.h>
#include <cusolver_common.h>

namespace {

#define BS_STR2(x) #x
#define BS_STR(x) BS_STR2(x)

struct Library {
    const char* soname;
    std::once_flag once;
    void* handle = nullptr;
    std::string error;
};
Library libraries[2] = {{"libcublas.so." BS_STR(CUBLAS_VER_MAJOR), {}, nullptr, {}},
                        {"libcusolver.so." BS_STR(CUSOLVER_VER_MAJOR), {}, nullptr, {}}};
enum { cublas = 0, cusolver = 1 };

void* open_library(int which) {
    Library& l = libraries[which];
    std::call_once(l.once, [&] {
        l.handle = dlopen(l.soname, RTLD_NOW | RTLD_LOCAL);
        if (l.handle == nullptr) {
            const char* why = dlerror();
            l.error = std::string(l.soname) + " could not be loaded (" + (why ? why : "dlopen failed") + ")";
        }
    });
    return l.handle;
}

// Where a library or a function is missing: every cuBLAS/cuSOLVER function used returns a status,
// 1 (CUBLAS_STATUS_NOT_INITIALIZED, CUSOLVER_STATUS_NOT_INITIALIZED), and the two status-name
// functions return the reason, so the caller's error names the library and what dlopen said.
int missing_status() { return 1; }
const char* missing_cublas_text() {
    return libraries[cublas].error.empty() ? "cuBLAS function missing from the loaded library" : libraries[cublas].error.c_str();
}

}  // namespace

// The trampolines, their slots and stubs (x86-64 System V). A stub loads its slot's address into
// r11 (not an argument register) and enters bs_lazy_common, which saves the argument registers
// (rdi, rsi, rdx, rcx, r8, r9, rax for varargs, xmm0-7), calls bs_lazy_resolve(slot), restores them
// and jumps to the resolved function: the caller's stack arguments and return address are untouched.
#define BS_LAZY_DECLARE(lib, name)                                                                  \
    extern "C" void bs_lazy_stub_##name();                                                          \
    extern "C" __attribute__((visibility("hidden"))) void* bs_lazy_slot_##name;                     \
    void* bs_lazy_slot_##name = reinterpret_cast<void*>(&bs_lazy_stub_##name);                      \
    asm(".pushsection .text\n"                                                                      \
        ".globl " #name "\n.hidden " #name "\n.type " #name ", @function\n.p2align 4\n" #name ":\n" \
        "  endbr64\n  jmp *bs_lazy_slot_" #name "(%rip)\n.size " #name ", .-" #name "\n"            \
        ".type bs_lazy_stub_" #name ", @function\nbs_lazy_stub_" #name ":\n"                         \
        "  endbr64\n  leaq bs_lazy_slot_" #name "(%rip), %r11\n  jmp bs_lazy_common\n"              \
        ".size bs_lazy_stub_" #name ", .-bs_lazy_stub_" #name "\n.popsection\n");
#include "lazy_libraries.def"
#undef BS_LAZY_DECLARE

namespace {
struct Entry {
    void** slot;
    const char* name;
    int library;
};
#define BS_LAZY_DECLARE(lib, name) {&bs_lazy_slot_##name, #name, lib},
const Entry entries[] = {
#include "lazy_libraries.def"
};
#undef BS_LAZY_DECLARE
}  // namespace

extern "C" __attribute__((visibility("hidden"))) void* bs_lazy_resolve(void** slot) noexcept {
    for (const Entry& e : entries) {
        if (e.slot != slot) continue;
        void* f = nullptr;
        if (void* h = open_library(e.library)) f = dlsym(h, e.name);
        if (f == nullptr) {
            const bool text = std::strstr(e.name, "GetStatusName") != nullptr || std::strstr(e.name, "GetStatusString") != nullptr;
            f = text ? reinterpret_cast<void*>(&missing_cublas_text) : reinterpret_cast<void*>(&missing_status);
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
        return f;
    }
    return reinterpret_cast<void*>(&missing_status);  // unreachable: every stub names its own slot
}

asm(".pushsection .text\n"
    ".p2align 4\n.type bs_lazy_common, @function\nbs_lazy_common:\n"
    "  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n  pushq %r8\n  pushq %r9\n  pushq %rax\n  pushq %r11\n"
    "  subq $136, %rsp\n"  // 8 pushes leave rsp = 8 mod 16 (as at the call): 136 more aligns it for the call below
    "  movups %xmm0, 0(%rsp)\n  movups %xmm1, 16(%rsp)\n  movups %xmm2, 32(%rsp)\n  movups %xmm3, 48(%rsp)\n"
    "  movups %xmm4, 64(%rsp)\n  movups %xmm5, 80(%rsp)\n  movups %xmm6, 96(%rsp)\n  movups %xmm7, 112(%rsp)\n"
    "  movq %r11, %rdi\n  call bs_lazy_resolve\n  movq %rax, 136(%rsp)\n"  // the target replaces the saved r11
    "  movups 0(%rsp), %xmm0\n  movups 16(%rsp), %xmm1\n  movups 32(%rsp), %xmm2\n  movups 48(%rsp), %xmm3\n"
    "  movups 64(%rsp), %xmm4\n  movups 80(%rsp), %xmm5\n  movups 96(%rsp), %xmm6\n  movups 112(%rsp), %xmm7\n"
    "  addq $136, %rsp\n"
    "  popq %r11\n  popq %rax\n  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n"
    "  jmp *%r11\n"
    ".size bs_lazy_common, .-bs_lazy_common\n.popsection\n");

namespace batchsolve::detail {
// For the test of this file: whether cuBLAS (0) or cuSOLVER (1) has been loaded by this process's
// libbatchsolve, and a call through a trampoline that needs no GPU (cublasGetProperty).
bool lazy_cuda_library_loaded(int which) { return libraries[which].handle != nullptr; }
int cublas_major_version_through_trampoline() {
    int major = -1;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS) return -1;
    return major;
}
int cusolver_major_version_through_trampoline() {
    int major = -1;
    if (cusolverGetProperty(MAJOR_VERSION, &major) != CUSOLVER_STATUS_SUCCESS) return -1;
    return major;
}
const char* cublas_status_name_through_trampoline(int status) { return cublasGetStatusName(cublasStatus_t(status)); }
}  // namespace batchsolve::detail
