// Fiber-based host emulator of a CUDA block (see emulator.hpp): ucontext fibers, one per thread,
// switched at barriers and shuffles by a round-robin scheduler that detects deadlocks and threads
// that leave a barrier others wait at.
#include "emulator.hpp"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bs_emu {

namespace {

constexpr std::size_t kStackBytes = std::size_t(1) << 20;  // per fiber; untouched pages cost nothing
constexpr std::size_t kGuardBytes = 256;                   // checked after every block
constexpr unsigned char kPoison = 0xFF;

struct Barrier {
    int arrived = 0;
    unsigned long long generation = 0;
};

struct Fiber {
    ucontext_t context{};
    char* stack = nullptr;
    Dim3 index;
    int tid = 0;
    bool done = false;
};

struct Block {
    Dim3 grid, block, index;
    Entry entry = nullptr;
    void** args = nullptr;
    std::vector<Fiber> fibers;
    std::vector<unsigned char> shared;
    Barrier block_barrier;
    std::vector<Barrier> warp_barriers;
    std::vector<std::vector<unsigned char>> slots;  // shuffle slot per thread
    int current = -1;
    bool progress = false;
    std::string error;
    ucontext_t scheduler{};
};

Block* g_block = nullptr;

Fiber& me() { return g_block->fibers[g_block->current]; }

void fail(const std::string& what) { throw std::runtime_error(what); }

void yield() {
    Fiber& f = me();
    swapcontext(&f.context, &g_block->scheduler);
}

// Waits until `expected` threads have arrived at `b` (the last arriver releases the others).
void wait(Barrier& b, int expected) {
    const unsigned long long generation = b.generation;
    g_block->progress = true;
    if (++b.arrived == expected) {
        b.arrived = 0;
        ++b.generation;
        return;
    }
    while (b.generation == generation) yield();
}

void trampoline() {
    Block* blk = g_block;
    try {
        blk->entry(blk->args);
    } catch (const std::exception& e) {
        if (blk->error.empty()) blk->error = e.what();
    } catch (...) {
        if (blk->error.empty()) blk->error = "unknown exception in a kernel thread";
    }
    blk->fibers[blk->current].done = true;
    blk->progress = true;
    // returning switches to uc_link (the scheduler)
}

char* stack_memory(std::size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("emulator: cannot map fiber stacks");
    return static_cast<char*>(p);
}

// Stacks are kept across launches (one mapping per thread slot).
std::vector<char*>& stacks() {
    static std::vector<char*> s;
    return s;
}

std::string where(const Block& b) {
    return "block (" + std::to_string(b.index.x) + ", " + std::to_string(b.index.y) + ")";
}

void run_block(Block& b) {
    const int threads = static_cast<int>(b.block.x * b.block.y * b.block.z);
    b.fibers.assign(threads, Fiber{});
    b.shared.assign(b.shared.size(), kPoison);
    b.block_barrier = Barrier{};
    b.warp_barriers.assign((threads + 31) / 32, Barrier{});
    b.slots.assign(threads, std::vector<unsigned char>(16));
    b.error.clear();
    while (static_cast<int>(stacks().size()) < threads) stacks().push_back(stack_memory(kStackBytes));
    for (int t = 0; t < threads; ++t) {
        Fiber& f = b.fibers[t];
        f.tid = t;
        f.index.x = t % b.block.x;
        f.index.y = (t / b.block.x) % b.block.y;
        f.index.z = t / (b.block.x * b.block.y);
        f.stack = stacks()[t];
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack;
        f.context.uc_stack.ss_size = kStackBytes;
        f.context.uc_link = &b.scheduler;
        makecontext(&f.context, trampoline, 0);
    }
    int finished = 0;
    while (finished < threads) {
        b.progress = false;
        finished = 0;
        for (int t = 0; t < threads; ++t) {
            if (b.fibers[t].done) {
                ++finished;
                continue;
            }
            b.current = t;
            swapcontext(&b.scheduler, &b.fibers[t].context);
            b.current = -1;
            if (!b.error.empty()) fail("emulated kernel, " + where(b) + ", thread " + std::to_string(t) + ": " + b.error);
            if (b.fibers[t].done && b.block_barrier.arrived > 0)
                fail("emulated kernel, " + where(b) + ": thread " + std::to_string(t) +
                     " exited while other threads wait at __syncthreads");
        }
        if (finished < threads && !b.progress)
            fail("emulated kernel, " + where(b) + ": deadlock (a barrier or shuffle that not every live thread of its "
                 "block or warp reaches)");
    }
    for (std::size_t i = b.shared.size() - kGuardBytes; i < b.shared.size(); ++i)
        if (b.shared[i] != kPoison) fail("emulated kernel, " + where(b) + ": write past the end of dynamic shared memory");
}

}  // namespace

const Dim3& thread_idx() { return me().index; }
const Dim3& block_idx() { return g_block->index; }
const Dim3& block_dim() { return g_block->block; }
const Dim3& grid_dim() { return g_block->grid; }
unsigned char* shared_memory() { return g_block->shared.data(); }
int lane_id() { return me().tid % 32; }

// Stricter than the hardware, which lets exited threads off: every thread of the block must arrive
// (the generated kernels never exit early, so a thread that skips a barrier is a bug).
void syncthreads() { wait(g_block->block_barrier, static_cast<int>(g_block->fibers.size())); }

void warp_exchange(unsigned mask, const void* value, void* out, std::size_t bytes, int src) {
    Block& b = *g_block;
    const int tid = me().tid, warp = tid / 32;
    if (mask != 0xffffffffu) fail("shuffle with a mask other than 0xffffffff");
    if ((warp + 1) * 32 > static_cast<int>(b.fibers.size())) fail("full-mask shuffle in a partial warp");
    for (int l = 0; l < 32; ++l)
        if (b.fibers[warp * 32 + l].done) fail("full-mask shuffle while lane " + std::to_string(l) + " has exited");
    if (bytes > b.slots[tid].size()) fail("shuffle of more than 16 bytes");
    std::memcpy(b.slots[tid].data(), value, bytes);
    wait(b.warp_barriers[warp], 32);  // every lane has published
    std::memcpy(out, b.slots[warp * 32 + src].data(), bytes);
    wait(b.warp_barriers[warp], 32);  // every lane has read before the slots are reused
}

const void* aligned16(const void* p) {
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) fail("misaligned 16-byte vector load");
    return p;
}

void launch(Entry entry, Dim3 grid, Dim3 block, std::size_t shared_bytes, void** args) {
    if (block.x * block.y * block.z == 0 || block.x * block.y * block.z > 1024) fail("emulator: bad block size");
    Block b;
    b.grid = grid;
    b.block = block;
    b.entry = entry;
    b.args = args;
    b.shared.assign(shared_bytes + kGuardBytes, kPoison);
    if (reinterpret_cast<std::uintptr_t>(b.shared.data()) % 16 != 0) fail("emulator: shared memory not 16-byte aligned");
    Block* previous = g_block;
    g_block = &b;
    try {
        for (unsigned z = 0; z < grid.z; ++z)
            for (unsigned y = 0; y < grid.y; ++y)
                for (unsigned x = 0; x < grid.x; ++x) {
                    b.index.x = x, b.index.y = y, b.index.z = z;
                    run_block(b);
                }
    } catch (...) {
        g_block = previous;
        throw;
    }
    g_block = previous;
}

}  // namespace bs_emu
