/*
 * serialwork: a QEMU TCG plugin that counts the instructions each CPU of
 * a Linux x86_64 guest executes, for the lab's "serialized work per AP"
 * (tools/bringuplab/runs/serialwork.py, docs/serialwork.md).
 *
 * Which CPU runs a block is told by its GS base, the CPU's per-CPU
 * offset (__per_cpu_offset[cpu], read from guest memory at the start
 * marker): QEMU 10.0's round-robin TCG passes plugin callbacks the index
 * of the vCPU that *translated* a block, not of the one running it
 * (plugin-gen.c gen_cpu_index() bakes a constant when CF_PARALLEL is
 * off), and its inline per-vCPU scoreboard ops corrupt Linux guests
 * there, so the plugin uses neither. Blocks run before a CPU loaded its
 * GS base (the AP's trampoline and early head code) count as "unknown".
 *
 * Counters, per CPU (Linux CPU number) and for unknown, between the
 * start and end markers:
 *   total  instructions of blocks without PAUSE (F3 90), not kept apart
 *   pause  instructions of blocks with a PAUSE: cpu_relax() spin loops,
 *          whose count depends on time, not on work
 *   apart  instructions of calls kept apart, and CPU 0's blocks on
 *          another stack than the control task's (other tasks, IRQs)
 * A call kept apart (apart=GROUP:HEXADDR[-HEXEND]:task|cpu) runs from a
 * block starting at its entry to the next block at the return address
 * that was at [rsp] on entry: "task" counts only the blocks on the
 * calling task's stack (a task switched to meanwhile counts as usual),
 * "cpu" every block of the CPU (interrupt entry points: the interrupted
 * RIP is at [rsp], and the handler moves to the IRQ stack).
 *
 * Arguments: out=PATH, cpus=N, percpu=HEXADDR (of __per_cpu_offset),
 * profile=on|off, calls kept apart (above) and markers
 * marker=NAME:HEXADDR:ROLE. A marker emits an event line when any CPU
 * executes the instruction at HEXADDR:
 *   E <seq> <cpu|-1> <name> <rdi hex> <total>:<pause>:<apart> ...
 *   (CPU 0..N-1, then unknown)
 * ROLE start arms the counters, window (rdi = the CPU being brought up)
 * starts a window of the control CPU (CPU 0), end writes the profile and
 * uninstalls the plugin (the rest of the boot runs uninstrumented),
 * note only emits the event.
 * Profile: executions of each block by bucket, written at the end:
 *   P <bucket> <block start hex> <insns> <executions> <pause 0|1>
 * buckets: role + 6 * (1 + group) in a call kept apart, else role:
 * 0 CPU 0 between start and the first window, 1 CPU 0 in windows, 2 the
 * window's CPU (rdi of the last window marker) in its window, 3 any
 * other CPU, 4 unknown, 5 CPU 0 on another stack than the control
 * task's. The last line, "D", says the end marker was seen.
 *
 * Build: gcc -shared -fPIC -O2 $(pkg-config --cflags glib-2.0)
 *        -I<dir of QEMU's qemu-plugin.h> serialwork.c -o serialwork.so
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_MARKERS 32
#define MAX_APART 128
#define MAX_GROUPS 6
#define MAX_CPUS 4096
#define NROLES 6
#define NBUCKETS (NROLES * (1 + MAX_GROUPS))
#define UNKNOWN MAX_CPUS        /* the counters' slot of unknown blocks */

enum role { ROLE_NOTE, ROLE_START, ROLE_WINDOW, ROLE_END };
enum bucket { B_FIRST, B_WINDOW, B_AP, B_OTHER, B_UNKNOWN, B_CPU0_OTHER };

struct marker {
    char name[64];
    uint64_t addr;
    enum role role;
};

/* A function whose whole call is kept apart (arg apart=GROUP:HEXADDR):
 * from a block at its entry to the next block, on the same CPU, at the
 * return address found at [rsp] on entry (for an interrupt entry point,
 * the interrupted RIP, where the iret goes back to). */
struct apart {
    uint64_t addr;
    uint64_t end;                /* a range of entry points: [addr, end) */
    int group;
    bool task;                   /* only the calling task's stack */
};

/* A call being kept apart: on the stack of the task that made it (task
 * regions, one per task, keyed by its stack: blocks of other tasks the
 * CPU switches to meanwhile still count, and a sleeping task keeps its
 * region until it returns), or on the whole CPU (interrupts, which move
 * to the IRQ stack). */
struct region {
    uint64_t stack;
    uint64_t ret;
    int group;                   /* -1: none */
};

struct cpu_counts {
    uint64_t total;
    uint64_t pause;
    uint64_t apart;
    struct region cpu_wide;
} __attribute__((aligned(64)));  /* one vCPU thread each under MTTCG */

struct block {
    uint64_t pc;
    uint32_t insns;
    uint32_t pause;
    const struct apart *entry;   /* the call kept apart it starts */
    uint64_t execs[NBUCKETS];
};

static struct marker markers[MAX_MARKERS];
static int n_markers;
static struct apart aparts[MAX_APART];
static int n_aparts;
static struct qemu_plugin_register *rsp_handle;
static uint64_t stack_mask = ~(uint64_t)(16384 - 1);  /* THREAD_SIZE */
static uint64_t control_stack;   /* CPU 0's task at the start marker */
static GHashTable *regions;      /* task stack -> struct region */
static GMutex region_lock;
static struct cpu_counts counts[MAX_CPUS + 1];
static unsigned int n_cpus;
static uint64_t percpu_addr;
static GHashTable *cpu_of_gs;            /* GS base -> CPU + 1 */
static struct qemu_plugin_register *gs_handle;
static qemu_plugin_id_t self;
static FILE *out;
static GMutex lock;
static GPtrArray *blocks;
static bool profile;
static bool done;
static uint64_t seq;
/* 0 disarmed, 1 first pass (start .. first window), 2 in a window */
static int phase;
static int64_t focus = -1;

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
    g_autoptr(GArray) regs = qemu_plugin_get_registers();

    for (guint i = 0; regs && i < regs->len; i++) {
        qemu_plugin_reg_descriptor *reg =
            &g_array_index(regs, qemu_plugin_reg_descriptor, i);
        if (g_strcmp0(reg->name, "gs_base") == 0) {
            gs_handle = reg->handle;
        } else if (g_strcmp0(reg->name, "rsp") == 0) {
            rsp_handle = reg->handle;
        }
    }
}

static uint64_t read_reg(const char *name)
{
    g_autoptr(GArray) regs = qemu_plugin_get_registers();
    g_autoptr(GByteArray) buf = g_byte_array_new();
    uint64_t val = 0;

    for (guint i = 0; regs && i < regs->len; i++) {
        qemu_plugin_reg_descriptor *reg =
            &g_array_index(regs, qemu_plugin_reg_descriptor, i);
        if (g_strcmp0(reg->name, name) == 0 &&
            qemu_plugin_read_register(reg->handle, buf) >= 8) {
            memcpy(&val, buf->data, 8);  /* x86: little endian, as host */
        }
    }
    return val;
}

/* The CPU running now (its slot in counts), UNKNOWN if its GS base is
 * no CPU's per-CPU offset yet. */
static unsigned int current_cpu_slot(void)
{
    static __thread uint64_t last_gs = 1;
    static __thread unsigned int last_slot = UNKNOWN;
    static __thread GByteArray *buf;
    uint64_t gs = 0;

    if (!gs_handle || !cpu_of_gs) {
        return UNKNOWN;
    }
    if (!buf) {
        buf = g_byte_array_new();
    }
    g_byte_array_set_size(buf, 0);
    if (qemu_plugin_read_register(gs_handle, buf) >= 8) {
        memcpy(&gs, buf->data, 8);
    }
    if (gs != last_gs) {
        gpointer hit = g_hash_table_lookup(cpu_of_gs, &gs);
        last_gs = gs;
        last_slot = hit ? GPOINTER_TO_UINT(hit) - 1 : UNKNOWN;
    }
    return last_slot;
}

static uint64_t read_rsp(void)
{
    static __thread GByteArray *buf;
    uint64_t rsp = 0;

    if (!buf) {
        buf = g_byte_array_new();
    }
    g_byte_array_set_size(buf, 0);
    if (rsp_handle && qemu_plugin_read_register(rsp_handle, buf) >= 8) {
        memcpy(&rsp, buf->data, 8);
    }
    return rsp;
}

static void learn_cpus(void)
{
    g_autoptr(GByteArray) data = g_byte_array_new();

    cpu_of_gs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                      NULL);
    if (!percpu_addr ||
        !qemu_plugin_read_memory_vaddr(percpu_addr, data, 8 * n_cpus)) {
        fprintf(out, "! cannot read __per_cpu_offset at %" PRIx64 "\n",
                percpu_addr);
        return;
    }
    for (unsigned int c = 0; c < n_cpus; c++) {
        uint64_t *key = g_new(uint64_t, 1);
        memcpy(key, data->data + 8 * c, 8);
        fprintf(out, "G %u %" PRIx64 "\n", c, *key);
        g_hash_table_insert(cpu_of_gs, key, GUINT_TO_POINTER(c + 1));
    }
}

static void write_profile(void)
{
    for (guint i = 0; i < blocks->len; i++) {
        struct block *b = g_ptr_array_index(blocks, i);
        for (int k = 0; k < NBUCKETS; k++) {
            uint64_t n = __atomic_load_n(&b->execs[k], __ATOMIC_RELAXED);
            if (n) {
                fprintf(out, "P %d %" PRIx64 " %u %" PRIu64 " %u\n", k,
                        b->pc, b->insns, n, b->pause);
            }
        }
    }
}

static void write_counts(void)
{
    for (unsigned int c = 0; c <= n_cpus; c++) {
        unsigned int slot = c == n_cpus ? UNKNOWN : c;
        fprintf(out, " %" PRIu64 ":%" PRIu64 ":%" PRIu64,
                __atomic_load_n(&counts[slot].total, __ATOMIC_RELAXED),
                __atomic_load_n(&counts[slot].pause, __ATOMIC_RELAXED),
                __atomic_load_n(&counts[slot].apart, __ATOMIC_RELAXED));
    }
}

static void on_marker(unsigned int vcpu, void *udata)
{
    struct marker *m = udata;
    uint64_t rdi = read_reg("rdi");
    unsigned int slot;

    g_mutex_lock(&lock);
    if (done) {
        g_mutex_unlock(&lock);
        return;
    }
    if (m->role == ROLE_START && phase == 0) {
        learn_cpus();
        control_stack = read_rsp() & stack_mask;
    }
    slot = current_cpu_slot();
    fprintf(out, "E %" PRIu64 " %d %s %" PRIx64, seq++,
            slot == UNKNOWN ? -1 : (int)slot, m->name, rdi);
    write_counts();
    fputc('\n', out);
    switch (m->role) {
    case ROLE_START:
        if (phase == 0) {
            __atomic_store_n(&phase, 1, __ATOMIC_RELAXED);
        }
        break;
    case ROLE_WINDOW:
        if (phase) {
            __atomic_store_n(&focus, (int64_t)(uint32_t)rdi,
                             __ATOMIC_RELAXED);
            __atomic_store_n(&phase, 2, __ATOMIC_RELAXED);
        }
        break;
    case ROLE_END:
        if (phase) {
            __atomic_store_n(&phase, 0, __ATOMIC_RELAXED);
            if (profile) {
                write_profile();
            }
            fprintf(out, "D\n");
            done = true;
            qemu_plugin_uninstall(self, NULL);
        }
        break;
    case ROLE_NOTE:
        break;
    }
    fflush(out);
    g_mutex_unlock(&lock);
}

/* The return address at [rsp], 0 if it cannot be read. */
static uint64_t return_address(uint64_t rsp)
{
    g_autoptr(GByteArray) buf = g_byte_array_new();
    uint64_t ret = 0;

    if (!rsp || !qemu_plugin_read_memory_vaddr(rsp, buf, 8)) {
        return 0;
    }
    memcpy(&ret, buf->data, 8);
    return ret;
}

/* The apart group this block of CPU c counts in, -1 for none; opens
 * and closes the CPU's regions. */
static int apart_group(struct cpu_counts *c, const struct block *b,
                       unsigned int slot)
{
    uint64_t rsp, stack;
    struct region *r;
    int group = -1;

    if (c->cpu_wide.group >= 0) {
        if (b->pc != c->cpu_wide.ret) {
            return c->cpu_wide.group;
        }
        c->cpu_wide.group = -1;
    }
    if (slot == UNKNOWN) {
        return -1;
    }
    rsp = read_rsp();
    stack = rsp & stack_mask;
    if (b->entry && !b->entry->task) {
        /* an interrupt, whatever the task it came in on was doing */
        uint64_t ret = return_address(rsp);
        if (ret) {
            c->cpu_wide.ret = ret;
            c->cpu_wide.group = b->entry->group;
            return b->entry->group;
        }
    }
    g_mutex_lock(&region_lock);
    r = g_hash_table_lookup(regions, &stack);
    if (r && b->pc == r->ret) {
        g_hash_table_remove(regions, &stack);
        r = NULL;
    } else if (r) {
        group = r->group;
    } else if (b->entry) {
        uint64_t ret = return_address(rsp);
        if (ret && b->entry->task) {
            r = g_new0(struct region, 1);
            r->stack = stack;
            r->ret = ret;
            r->group = b->entry->group;
            g_hash_table_insert(regions, &r->stack, r);
            group = r->group;
        }
    }
    g_mutex_unlock(&region_lock);
    if (group >= 0) {
        return group;
    }
    if (slot == 0 && control_stack && stack != control_stack) {
        return -2;               /* another task (or IRQ stack) of CPU 0 */
    }
    return -1;
}

static void on_block(unsigned int vcpu, void *udata)
{
    struct block *b = udata;
    int ph = __atomic_load_n(&phase, __ATOMIC_RELAXED);
    unsigned int slot;
    struct cpu_counts *c;
    int group;
    int k;

    if (!ph) {
        return;
    }
    slot = current_cpu_slot();
    c = &counts[slot];
    group = apart_group(c, b, slot);
    /* one vCPU thread runs a CPU: plain read, atomic store */
    if (group >= 0 || group == -2) {
        __atomic_store_n(&c->apart, c->apart + b->insns, __ATOMIC_RELAXED);
    } else if (b->pause) {
        __atomic_store_n(&c->pause, c->pause + b->insns, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(&c->total, c->total + b->insns, __ATOMIC_RELAXED);
    }
    if (!profile) {
        return;
    }
    if (slot == UNKNOWN) {
        k = B_UNKNOWN;
    } else if (slot == 0 && group == -2) {
        k = B_CPU0_OTHER;
    } else if (slot == 0) {
        k = ph == 1 ? B_FIRST : B_WINDOW;
    } else if (ph == 2 &&
               (int64_t)slot == __atomic_load_n(&focus, __ATOMIC_RELAXED)) {
        k = B_AP;
    } else {
        k = B_OTHER;
    }
    if (group >= 0) {
        k += NROLES * (1 + group);
    }
    __atomic_fetch_add(&b->execs[k], 1, __ATOMIC_RELAXED);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    bool has_pause = false;
    struct block *b;

    if (__atomic_load_n(&done, __ATOMIC_RELAXED)) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        uint8_t code[2];

        if (qemu_plugin_insn_size(insn) == 2 &&
            qemu_plugin_insn_data(insn, code, 2) == 2 &&
            code[0] == 0xf3 && code[1] == 0x90) {
            has_pause = true;
        }
        for (int m = 0; m < n_markers; m++) {
            if (markers[m].addr == pc) {
                qemu_plugin_register_vcpu_insn_exec_cb(
                    insn, on_marker, QEMU_PLUGIN_CB_R_REGS, &markers[m]);
            }
        }
    }
    b = g_new0(struct block, 1);
    b->pc = qemu_plugin_tb_vaddr(tb);
    for (int a = 0; a < n_aparts; a++) {
        if (aparts[a].addr == b->pc ||
            (aparts[a].addr < b->pc && b->pc < aparts[a].end)) {
            b->entry = &aparts[a];
        }
    }
    b->insns = n;
    b->pause = has_pause;
    g_mutex_lock(&lock);
    g_ptr_array_add(blocks, b);
    g_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_R_REGS,
                                         b);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    if (out) {
        fflush(out);
    }
}

static int parse_apart(const char *spec)
{
    g_auto(GStrv) part = g_strsplit(spec, ":", 3);
    char *end;
    int group;

    if (g_strv_length(part) != 3 || n_aparts == MAX_APART ||
        (strcmp(part[2], "task") && strcmp(part[2], "cpu"))) {
        return -1;
    }
    group = atoi(part[0]);
    if (group < 0 || group >= MAX_GROUPS) {
        return -1;
    }
    aparts[n_aparts].group = group;
    aparts[n_aparts].addr = g_ascii_strtoull(part[1], &end, 16);
    aparts[n_aparts].end = *end == '-' ?
        g_ascii_strtoull(end + 1, NULL, 16) : 0;
    aparts[n_aparts].task = !strcmp(part[2], "task");
    n_aparts++;
    return 0;
}

static int parse_marker(const char *spec)
{
    g_auto(GStrv) part = g_strsplit(spec, ":", 3);
    static const char *const roles[] = {"note", "start", "window", "end"};
    struct marker *m;

    if (g_strv_length(part) != 3 || n_markers == MAX_MARKERS) {
        return -1;
    }
    m = &markers[n_markers];
    g_strlcpy(m->name, part[0], sizeof(m->name));
    m->addr = g_ascii_strtoull(part[1], NULL, 16);
    for (int r = 0; r < 4; r++) {
        if (!strcmp(part[2], roles[r])) {
            m->role = r;
            n_markers++;
            return 0;
        }
    }
    return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *path = NULL;

    for (int i = 0; i < argc; i++) {
        g_auto(GStrv) kv = g_strsplit(argv[i], "=", 2);
        if (g_strv_length(kv) != 2) {
            fprintf(stderr, "serialwork: bad argument '%s'\n", argv[i]);
            return -1;
        }
        if (!strcmp(kv[0], "out")) {
            path = argv[i] + 4;
        } else if (!strcmp(kv[0], "cpus")) {
            n_cpus = strtoul(kv[1], NULL, 10);
        } else if (!strcmp(kv[0], "percpu")) {
            percpu_addr = g_ascii_strtoull(kv[1], NULL, 16);
        } else if (!strcmp(kv[0], "marker")) {
            if (parse_marker(kv[1])) {
                fprintf(stderr, "serialwork: bad marker '%s' "
                        "(NAME:HEXADDR:start|window|end|note)\n", kv[1]);
                return -1;
            }
        } else if (!strcmp(kv[0], "apart")) {
            if (parse_apart(kv[1])) {
                fprintf(stderr, "serialwork: bad apart '%s' "
                        "(GROUP 0-%d:HEXADDR[-HEXEND]:task|cpu)\n", kv[1],
                        MAX_GROUPS - 1);
                return -1;
            }
        } else if (!strcmp(kv[0], "profile")) {
            if (!qemu_plugin_bool_parse(kv[0], kv[1], &profile)) {
                fprintf(stderr, "serialwork: bad profile '%s'\n", kv[1]);
                return -1;
            }
        } else {
            fprintf(stderr, "serialwork: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!path || !n_cpus || n_cpus > MAX_CPUS) {
        fprintf(stderr, "serialwork: out=PATH and cpus=1..%d are needed\n",
                MAX_CPUS);
        return -1;
    }
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        return -1;
    }
    fprintf(out, "# serialwork 1 target %s cpus %u\n", info->target_name,
            n_cpus);
    for (int m = 0; m < n_markers; m++) {
        fprintf(out, "M %s %" PRIx64 " %d\n", markers[m].name,
                markers[m].addr, markers[m].role);
    }
    self = id;
    for (int c = 0; c <= MAX_CPUS; c++) {
        counts[c].cpu_wide.group = -1;
    }
    regions = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
                                    g_free);
    blocks = g_ptr_array_new();
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
