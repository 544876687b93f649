#include "tables/syscall_groups.h"

namespace aasmc {
namespace {

// The curated groups behind `@name` in a policy (docs/groups.md lists them;
// `aasmc groups` prints this table). Memberships follow the kernel's syscall
// tables for x86_64 and aarch64 and the @-sets systemd documents for
// SystemCallFilter=, regrouped for aasm's two uses:
//
//  - allow groups (@startup, @file-read, @file-write, @process, @network,
//    @ipc, @signal, @time, @memory) are building blocks for an allowlist;
//  - deny groups (@mount, @privileged, @debug, @kernel) are what a policy
//    names in syscalls.deny.
//
// The uid/gid calls are the exception, in @process and @privileged both,
// gated by the capability that lets them raise privilege (GroupMember::
// capability): a policy's expansion holds each in exactly one of them.
// Otherwise no syscall is in both an allow group and a deny group: a document may say
// `allow: ["@file-read"]` and `deny: ["@mount"]` together, and one name in
// both lists of a document is an error. Members may exist on one target only
// (`open` is x86_64 only); the compiler keeps a member where a target has it.
// tests/schema/groups_test.cpp checks every member against both targets.

// Measured with `strace -f` on dynamically linked Debian 12 binaries (glibc
// 2.36) from execve to main(). Members absent on a target (arch_prctl and
// access on aarch64) are skipped for that target.
constexpr GroupMember kStartup[] = {
    {"execve", "the launcher's own final call, made after the filter is installed"},
    {"brk", "malloc's heap set-up in ld.so and libc"},
    {"mmap", "ld.so maps the program's libraries"},
    {"mprotect", "ld.so applies RELRO and segment permissions"},
    {"munmap", "ld.so unmaps temporary mappings"},
    {"arch_prctl", "x86_64 libc sets the thread pointer (FS base)"},
    {"set_tid_address", "libc thread start-up (clear_child_tid)"},
    {"set_robust_list", "libc registers the robust futex list"},
    {"rseq", "glibc 2.35+ registers restartable sequences"},
    {"prlimit64", "libc reads the stack limit"},
    {"getrandom", "libc seeds malloc and stack-protector state"},
    {"openat", "ld.so opens ld.so.cache and libraries"},
    {"read", "ld.so reads ELF headers"},
    {"pread64", "ld.so reads program headers"},
    {"close", "ld.so closes library descriptors"},
    {"newfstatat", "ld.so stats libraries (fstat is newfstatat in glibc 2.33+)"},
    {"fstat", "older libc stats libraries with fstat"},
    {"access", "ld.so checks /etc/ld.so.preload"},
    {"faccessat", "ld.so checks /etc/ld.so.preload on aarch64"},
    {"exit", "a thread ending"},
    {"exit_group", "the process ending, and the child reporting a failed execve"},
    {"rt_sigreturn", "returning from a signal handler"},
};

// Opening and reading files and directories, and their metadata. Which
// paths may be opened, and whether for writing, is Landlock's business
// (spec.filesystem): the syscall filter cannot tell a read open from a write.
constexpr GroupMember kFileRead[] = {
    {"open", "opens a file by path (x86_64 only; aarch64 has only openat)"},
    {"openat", "opens a file relative to a directory descriptor; libc's open()"},
    {"openat2", "openat with resolve restrictions (RESOLVE_BENEATH and friends)"},
    {"read", "reads from a descriptor"},
    {"readv", "reads into several buffers at once"},
    {"pread64", "reads at an offset without moving the file position"},
    {"preadv", "positioned read into several buffers"},
    {"preadv2", "positioned vector read with per-call flags"},
    {"lseek", "moves the file position"},
    {"close", "releases a descriptor"},
    {"close_range", "releases a range of descriptors (used before exec)"},
    {"dup", "copies a descriptor"},
    {"dup2", "copies a descriptor onto a chosen number (x86_64 only)"},
    {"dup3", "copies a descriptor onto a chosen number, with O_CLOEXEC"},
    {"fcntl", "descriptor flags, locks and close-on-exec"},
    {"flock", "advisory whole-file locks"},
    {"ioctl", "device and terminal control (isatty, window size); restrict with rules"},
    {"stat", "file metadata by path (x86_64 only)"},
    {"lstat", "file metadata without following a final symlink (x86_64 only)"},
    {"fstat", "file metadata of an open descriptor"},
    {"newfstatat", "file metadata relative to a directory; libc's stat family"},
    {"statx", "extended file metadata (coreutils, modern libc)"},
    {"statfs", "file-system metadata by path (df, free-space checks)"},
    {"fstatfs", "file-system metadata of an open descriptor"},
    {"access", "checks permissions by path (x86_64 only)"},
    {"faccessat", "checks permissions relative to a directory"},
    {"faccessat2", "faccessat with flags (AT_EACCESS); glibc 2.33+"},
    {"getdents", "lists a directory, old layout (x86_64 only)"},
    {"getdents64", "lists a directory; readdir()"},
    {"readlink", "reads a symbolic link (x86_64 only)"},
    {"readlinkat", "reads a symbolic link relative to a directory"},
    {"getcwd", "reads the working directory"},
    {"chdir", "changes the working directory"},
    {"fchdir", "changes the working directory to an open directory"},
    {"getxattr", "reads an extended attribute"},
    {"lgetxattr", "reads an extended attribute of a symlink itself (ls -l)"},
    {"fgetxattr", "reads an extended attribute of an open file"},
    {"listxattr", "lists extended attributes"},
    {"llistxattr", "lists extended attributes of a symlink itself"},
    {"flistxattr", "lists extended attributes of an open file"},
    {"fadvise64", "access-pattern hints for the page cache"},
    {"readahead", "pre-loads file pages into the page cache"},
    {"inotify_init", "creates a file-change watcher (x86_64 only)"},
    {"inotify_init1", "creates a file-change watcher with flags"},
    {"inotify_add_watch", "watches a path for changes"},
    {"inotify_rm_watch", "stops watching a path"},
    {"poll", "waits for descriptors to become ready (x86_64 only)"},
    {"ppoll", "poll with a signal mask; libc's poll() on aarch64"},
    {"select", "waits for descriptors to become ready, old interface (x86_64 only)"},
    {"pselect6", "select with a signal mask; libc's select() on aarch64"},
    {"epoll_create", "creates an event-loop instance (x86_64 only)"},
    {"epoll_create1", "creates an event-loop instance with flags"},
    {"epoll_ctl", "adds or removes descriptors of an event loop"},
    {"epoll_wait", "waits on an event loop (x86_64 only)"},
    {"epoll_pwait", "waits on an event loop with a signal mask"},
    {"epoll_pwait2", "epoll_pwait with a nanosecond timeout"},
};

// Creating, changing and removing files. Which paths is again Landlock's
// business (spec.filesystem.write).
constexpr GroupMember kFileWrite[] = {
    {"write", "writes to a descriptor"},
    {"writev", "writes several buffers at once"},
    {"pwrite64", "writes at an offset without moving the file position"},
    {"pwritev", "positioned write from several buffers"},
    {"pwritev2", "positioned vector write with per-call flags"},
    {"creat", "creates a file, old interface (x86_64 only)"},
    {"truncate", "sets a file's length by path"},
    {"ftruncate", "sets an open file's length"},
    {"fallocate", "reserves or punches space in a file"},
    {"fsync", "flushes a file to storage"},
    {"fdatasync", "flushes a file's data to storage"},
    {"sync_file_range", "flushes part of a file to storage"},
    {"syncfs", "flushes the file system holding a file"},
    {"sync", "flushes every file system"},
    {"mkdir", "creates a directory (x86_64 only)"},
    {"mkdirat", "creates a directory relative to a directory"},
    {"rmdir", "removes a directory (x86_64 only)"},
    {"unlink", "removes a name (x86_64 only)"},
    {"unlinkat", "removes a name or directory relative to a directory"},
    {"rename", "renames (x86_64 only)"},
    {"renameat", "renames relative to directories"},
    {"renameat2", "renames with flags (RENAME_NOREPLACE, RENAME_EXCHANGE)"},
    {"link", "creates a hard link (x86_64 only)"},
    {"linkat", "creates a hard link relative to directories"},
    {"symlink", "creates a symbolic link (x86_64 only)"},
    {"symlinkat", "creates a symbolic link relative to a directory"},
    {"mknod", "creates a FIFO or socket file; device nodes need CAP_MKNOD (x86_64 only)"},
    {"mknodat", "mknod relative to a directory"},
    {"chmod", "changes permission bits (x86_64 only)"},
    {"fchmod", "changes permission bits of an open file"},
    {"fchmodat", "changes permission bits relative to a directory"},
    {"fchmodat2", "fchmodat with flags (AT_SYMLINK_NOFOLLOW), Linux 6.6"},
    {"chown", "changes owner or group; only to one's own groups without CAP_CHOWN (x86_64 only)"},
    {"lchown", "chown of a symlink itself (x86_64 only)"},
    {"fchown", "chown of an open file"},
    {"fchownat", "chown relative to a directory"},
    {"umask", "sets the permission mask for new files"},
    {"utime", "sets access and modification times, old interface (x86_64 only)"},
    {"utimes", "sets times in microseconds (x86_64 only)"},
    {"futimesat", "utimes relative to a directory (x86_64 only)"},
    {"utimensat", "sets times in nanoseconds; touch"},
    {"setxattr", "sets an extended attribute"},
    {"lsetxattr", "sets an extended attribute of a symlink itself"},
    {"fsetxattr", "sets an extended attribute of an open file"},
    {"removexattr", "removes an extended attribute"},
    {"lremovexattr", "removes an extended attribute of a symlink itself"},
    {"fremovexattr", "removes an extended attribute of an open file"},
    {"copy_file_range", "copies between files inside the kernel (cp)"},
    {"sendfile", "copies from a file to a descriptor inside the kernel"},
    {"splice", "moves data between a pipe and a descriptor"},
    {"tee", "duplicates pipe data without consuming it"},
};

// Creating, running and waiting for processes and threads, and reading the
// process's own identity. capabilities.deny: [process_creation] still
// refuses new processes on top of an allowed @process.
constexpr GroupMember kProcess[] = {
    {"fork", "creates a process (x86_64 only)"},
    {"vfork", "creates a process sharing memory until exec (x86_64 only)"},
    {"clone", "creates a process or thread; libc's fork() and pthread_create()"},
    {"clone3", "clone with an extensible argument struct; glibc 2.34+ threads"},
    {"execve", "runs a program"},
    {"execveat", "runs a program given by descriptor (fexecve)"},
    {"wait4", "waits for a child; libc's waitpid()"},
    {"waitid", "waits for a child, with more control"},
    {"exit", "ends the calling thread"},
    {"exit_group", "ends the process"},
    {"getpid", "reads the process id"},
    {"getppid", "reads the parent's process id"},
    {"gettid", "reads the thread id"},
    {"getpgid", "reads a process group"},
    {"getpgrp", "reads the own process group (x86_64 only)"},
    {"setpgid", "moves a process into a process group (shells' job control)"},
    {"getsid", "reads a session id"},
    {"setsid", "starts a new session (daemons, terminals)"},
    {"getuid", "reads the real user id"},
    {"geteuid", "reads the effective user id"},
    {"getgid", "reads the real group id"},
    {"getegid", "reads the effective group id"},
    {"getresuid", "reads real, effective and saved user ids"},
    {"getresgid", "reads real, effective and saved group ids"},
    {"getgroups", "reads the supplementary groups"},
    {"setuid", "sets the user ids to the real or saved one", "CAP_SETUID"},
    {"setgid", "sets the group ids to the real or saved one", "CAP_SETGID"},
    {"setreuid", "swaps or drops the real and effective user ids", "CAP_SETUID"},
    {"setregid", "swaps or drops the real and effective group ids", "CAP_SETGID"},
    {"setresuid", "keeps or drops real, effective and saved user ids; glibc's posix_spawn (POSIX_SPAWN_RESETIDS, GNU make) calls it", "CAP_SETUID"},
    {"setresgid", "keeps or drops real, effective and saved group ids; glibc's posix_spawn calls it", "CAP_SETGID"},
    {"setfsuid", "sets the file-access user id to one of the own ids; also reads it", "CAP_SETUID"},
    {"setfsgid", "sets the file-access group id to one of the own ids; also reads it", "CAP_SETGID"},
    {"setgroups", "fails without CAP_SETGID whatever the list; newgrp, su and shells call it", "CAP_SETGID"},
    {"capget", "reads capability sets"},
    {"prctl", "per-process settings (name, no_new_privs, dumpable)"},
    {"arch_prctl", "x86 thread-pointer set-up (x86_64 only)"},
    {"set_tid_address", "thread start-up (clear_child_tid)"},
    {"set_robust_list", "registers a thread's robust futex list"},
    {"get_robust_list", "reads a thread's robust futex list"},
    {"rseq", "registers restartable sequences (glibc 2.35+)"},
    {"uname", "reads the kernel name and version"},
    {"getrlimit", "reads a resource limit"},
    {"setrlimit", "lowers a resource limit (raising one needs CAP_SYS_RESOURCE)"},
    {"prlimit64", "reads or sets resource limits; libc's getrlimit()"},
    {"getrusage", "reads resource usage of self or children"},
    {"times", "reads process CPU times"},
    {"getpriority", "reads a scheduling priority"},
    {"setpriority", "lowers the own scheduling priority (nice)"},
    {"sched_yield", "gives up the CPU"},
    {"sched_getaffinity", "reads the CPU mask; nproc and thread pools size themselves with it"},
    {"sched_setaffinity", "pins threads to CPUs"},
    {"sched_getparam", "reads scheduling parameters"},
    {"sched_getscheduler", "reads the scheduling policy"},
    {"sched_get_priority_max", "reads the priority range of a policy"},
    {"sched_get_priority_min", "reads the priority range of a policy"},
    {"pidfd_open", "a descriptor for a process, to wait on it race-free"},
    {"getrandom", "random bytes for hash seeds and keys"},
};

// Sockets. Which addresses and ports a socket may reach is decided by
// spec.network (Landlock for TCP ports, a socket rule for UDP and raw).
constexpr GroupMember kNetwork[] = {
    {"socket", "creates a socket"},
    {"socketpair", "creates a connected pair of local sockets"},
    {"connect", "connects a socket"},
    {"bind", "gives a socket a local address"},
    {"listen", "accepts connections on a socket"},
    {"accept", "takes a connection from a listening socket"},
    {"accept4", "accept with flags (SOCK_CLOEXEC)"},
    {"getsockname", "reads a socket's local address"},
    {"getpeername", "reads a socket's peer address"},
    {"getsockopt", "reads socket options"},
    {"setsockopt", "sets socket options"},
    {"sendto", "sends a datagram or stream data; libc's send()"},
    {"recvfrom", "receives data; libc's recv()"},
    {"sendmsg", "sends with ancillary data"},
    {"recvmsg", "receives with ancillary data"},
    {"sendmmsg", "sends several datagrams at once (resolvers)"},
    {"recvmmsg", "receives several datagrams at once"},
    {"shutdown", "closes one direction of a connection"},
};

// Communication between processes and threads inside the sandbox; what may
// leave the sandbox is spec.ipc's business.
constexpr GroupMember kIpc[] = {
    {"pipe", "creates a pipe (x86_64 only)"},
    {"pipe2", "creates a pipe with flags"},
    {"eventfd", "creates an event counter (x86_64 only)"},
    {"eventfd2", "creates an event counter with flags"},
    {"futex", "threads wait for and wake each other; every mutex and condition variable"},
    {"mq_open", "opens a POSIX message queue"},
    {"mq_unlink", "removes a POSIX message queue"},
    {"mq_timedsend", "sends to a POSIX message queue"},
    {"mq_timedreceive", "receives from a POSIX message queue"},
    {"mq_notify", "asks to be told when a message queue fills"},
    {"mq_getsetattr", "reads or sets message-queue attributes"},
    {"msgget", "opens a System V message queue"},
    {"msgsnd", "sends to a System V message queue"},
    {"msgrcv", "receives from a System V message queue"},
    {"msgctl", "controls a System V message queue"},
    {"semget", "opens a System V semaphore set"},
    {"semop", "operates on System V semaphores"},
    {"semtimedop", "semop with a timeout"},
    {"semctl", "controls a System V semaphore set"},
    {"shmget", "opens a System V shared-memory segment"},
    {"shmat", "maps a System V shared-memory segment"},
    {"shmdt", "unmaps a System V shared-memory segment"},
    {"shmctl", "controls a System V shared-memory segment"},
};

// Signal handling, and sending signals (spec.ipc.signals decides whether a
// signal may reach a process outside the sandbox).
constexpr GroupMember kSignal[] = {
    {"rt_sigaction", "installs a signal handler"},
    {"rt_sigprocmask", "blocks and unblocks signals"},
    {"rt_sigreturn", "returns from a signal handler"},
    {"rt_sigpending", "reads the pending signals"},
    {"rt_sigsuspend", "waits for a signal with a temporary mask"},
    {"rt_sigtimedwait", "waits for a signal synchronously; sigwait()"},
    {"sigaltstack", "sets an alternate stack for handlers (Go, Rust, stack-overflow handlers)"},
    {"signalfd", "receives signals through a descriptor (x86_64 only)"},
    {"signalfd4", "signalfd with flags"},
    {"pause", "waits for any signal (x86_64 only)"},
    {"restart_syscall", "the kernel restarts a call a signal interrupted"},
    {"kill", "sends a signal to a process or group"},
    {"tkill", "sends a signal to a thread, old interface"},
    {"tgkill", "sends a signal to a thread; raise() and abort()"},
    {"rt_sigqueueinfo", "queues a signal with data to a process"},
    {"rt_tgsigqueueinfo", "queues a signal with data to a thread"},
    {"pidfd_send_signal", "sends a signal through a process descriptor"},
};

// Reading clocks, sleeping and timers; setting the system clock is in
// @privileged.
constexpr GroupMember kTime[] = {
    {"clock_gettime", "reads a clock (usually answered by the vDSO without a syscall)"},
    {"clock_getres", "reads a clock's resolution"},
    {"gettimeofday", "reads the wall clock, old interface"},
    {"time", "reads the wall clock in seconds (x86_64 only)"},
    {"nanosleep", "sleeps"},
    {"clock_nanosleep", "sleeps on a chosen clock; libc's nanosleep() and sleep()"},
    {"alarm", "a SIGALRM after some seconds (x86_64 only)"},
    {"getitimer", "reads an interval timer"},
    {"setitimer", "sets an interval timer"},
    {"timer_create", "creates a POSIX timer"},
    {"timer_settime", "arms a POSIX timer"},
    {"timer_gettime", "reads a POSIX timer"},
    {"timer_getoverrun", "reads a POSIX timer's overrun count"},
    {"timer_delete", "removes a POSIX timer"},
    {"timerfd_create", "creates a timer that fires through a descriptor"},
    {"timerfd_settime", "arms a timer descriptor"},
    {"timerfd_gettime", "reads a timer descriptor"},
};

// The process's own memory.
constexpr GroupMember kMemory[] = {
    {"brk", "grows or shrinks the heap"},
    {"mmap", "maps memory or a file"},
    {"munmap", "unmaps memory"},
    {"mremap", "grows or moves a mapping (realloc of large blocks)"},
    {"mprotect", "changes the protection of a mapping (JITs, guard pages)"},
    {"madvise", "usage hints; malloc returns freed memory with it"},
    {"msync", "flushes a file mapping to its file"},
    {"mincore", "asks which pages are resident"},
    {"mlock", "keeps pages in RAM (within RLIMIT_MEMLOCK)"},
    {"mlock2", "mlock with flags"},
    {"munlock", "releases locked pages"},
    {"mlockall", "locks the whole address space (within RLIMIT_MEMLOCK)"},
    {"munlockall", "releases every locked page"},
    {"membarrier", "memory barriers across threads (language runtimes)"},
    {"memfd_create", "anonymous memory with a descriptor (JITs, shared buffers)"},
    {"pkey_alloc", "allocates a memory protection key"},
    {"pkey_free", "frees a memory protection key"},
    {"pkey_mprotect", "mprotect with a protection key"},
    {"get_mempolicy", "reads the NUMA memory policy"},
    {"sysinfo", "reads total and free memory; sort, gcc's cc1, ld, node and python size their buffers with it"},
};

// --- deny groups ---------------------------------------------------------

// Changing the file-system tree the process sees.
constexpr GroupMember kMount[] = {
    {"mount", "mounts a file system, or bind-mounts a path over another"},
    {"umount2", "unmounts a file system"},
    {"pivot_root", "swaps the root file system"},
    {"chroot", "changes the root directory"},
    {"fsopen", "new mount API: opens a file-system context"},
    {"fsconfig", "new mount API: configures a file-system context"},
    {"fsmount", "new mount API: creates a mount from a context"},
    {"fspick", "new mount API: reopens an existing mount for reconfiguration"},
    {"move_mount", "new mount API: attaches or moves a mount"},
    {"open_tree", "new mount API: clones a mount tree (detached bind mount)"},
    {"mount_setattr", "changes mount properties (read-only, idmapping)"},
};

// Changing identity, privileges and host-wide settings, and leaving the
// namespaces the launcher set up.
constexpr GroupMember kPrivileged[] = {
    {"setuid", "changes the user id to any value", "CAP_SETUID"},
    {"setgid", "changes the group id to any value", "CAP_SETGID"},
    {"setreuid", "changes real and effective user ids to any value", "CAP_SETUID"},
    {"setregid", "changes real and effective group ids to any value", "CAP_SETGID"},
    {"setresuid", "changes real, effective and saved user ids to any value", "CAP_SETUID"},
    {"setresgid", "changes real, effective and saved group ids to any value", "CAP_SETGID"},
    {"setfsuid", "changes the user id used for file access to any value", "CAP_SETUID"},
    {"setfsgid", "changes the group id used for file access to any value", "CAP_SETGID"},
    {"setgroups", "changes the supplementary groups to any value", "CAP_SETGID"},
    {"capset", "changes capability sets"},
    {"unshare", "creates namespaces (user namespaces widen kernel attack surface); isolation is the launcher's job"},
    {"setns", "joins another namespace"},
    {"sethostname", "changes the host name"},
    {"setdomainname", "changes the NIS domain name"},
    {"settimeofday", "sets the system clock"},
    {"clock_settime", "sets a system clock"},
    {"clock_adjtime", "adjusts a system clock"},
    {"adjtimex", "tunes the kernel clock"},
    {"acct", "switches process accounting"},
    {"quotactl", "manages disk quotas"},
    {"quotactl_fd", "manages disk quotas through a descriptor"},
    {"vhangup", "hangs up the controlling terminal"},
    {"iopl", "raises the I/O privilege level (x86_64 only)"},
    {"ioperm", "grants raw I/O port access (x86_64 only)"},
    {"open_by_handle_at", "opens a file by handle, bypassing path permission checks"},
    {"name_to_handle_at", "obtains file handles for open_by_handle_at"},
    {"fanotify_init", "creates a whole-file-system event watcher"},
    {"fanotify_mark", "marks paths or mounts for fanotify"},
    {"nfsservctl", "legacy NFS server control"},
    {"_sysctl", "legacy binary sysctl interface (x86_64 only)"},
    {"ioprio_set", "changes I/O scheduling priority"},
    {"sched_setscheduler", "switches to a real-time scheduling policy"},
    {"sched_setparam", "changes real-time scheduling priority"},
    {"sched_setattr", "changes scheduling policy and attributes"},
                };

// Looking into or controlling other processes.
constexpr GroupMember kDebug[] = {
    {"ptrace", "traces and controls another process (debuggers, strace)"},
    {"process_vm_readv", "reads another process's memory"},
    {"process_vm_writev", "writes another process's memory"},
    {"kcmp", "compares kernel objects of two processes (checkpoint/restore)"},
    {"pidfd_getfd", "steals a descriptor from another process"},
    {"process_madvise", "gives memory advice for another process"},
    {"process_mrelease", "reaps the memory of a dying process"},
    {"personality", "changes the execution domain; can turn ASLR off"},
    {"lookup_dcookie", "resolves profiler directory cookies"},
};

// Reconfiguring the running kernel, and interfaces with a history of
// kernel exploits that ordinary commands do not need.
constexpr GroupMember kKernel[] = {
    {"bpf", "loads BPF programs and maps into the kernel"},
    {"perf_event_open", "performance counters and tracing; a large kernel attack surface"},
    {"init_module", "loads a kernel module from memory"},
    {"finit_module", "loads a kernel module from a file"},
    {"delete_module", "unloads a kernel module"},
    {"create_module", "legacy module loading (x86_64 only)"},
    {"query_module", "legacy module query (x86_64 only)"},
    {"get_kernel_syms", "legacy kernel symbol table read (x86_64 only)"},
    {"kexec_load", "loads a new kernel to boot into"},
    {"kexec_file_load", "loads a new kernel from files to boot into"},
    {"reboot", "reboots or powers off the host"},
    {"swapon", "enables a swap area"},
    {"swapoff", "disables a swap area"},
    {"add_key", "adds a key to a kernel keyring"},
    {"request_key", "asks the kernel keyring for a key, maybe via an upcall"},
    {"keyctl", "manipulates kernel keyrings"},
    {"syslog", "reads or clears the kernel log buffer"},
    {"userfaultfd", "handles page faults in user space; a common exploit primitive"},
    {"io_uring_setup", "creates an io_uring; its operations bypass the syscall filter"},
    {"io_uring_enter", "submits io_uring operations, which the syscall filter does not see"},
    {"io_uring_register", "registers buffers and files with an io_uring"},
    {"modify_ldt", "changes the x86 local descriptor table (x86_64 only)"},
    {"uselib", "legacy shared-library loading (x86_64 only)"},
    {"ustat", "legacy file-system statistics by device number (x86_64 only)"},
    {"sysfs", "legacy file-system type query (x86_64 only)"},
};

// Argument-level deny sets: the call stays usable, the dangerous requests do not.
constexpr GroupRule kTtyInjection[] = {
    {"ioctl", "request == TIOCSTI",
     "pushes bytes into a terminal's input queue: whatever reads the terminal next (the user's shell) runs them"},
    {"ioctl", "request == TIOCLINUX",
     "the console's subcommands include pasting the selection into the input queue, the same injection"},
};

constexpr GroupRule kNamespaces[] = {
    {"clone", "flags & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)",
     "a process in new namespaces; a user namespace hands it capabilities over them and widens the kernel's attack surface"},
    {"unshare",
     "flags & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME)",
     "moves the caller into new namespaces, as clone does for a child"},
};

constexpr GroupMember kNamespaceCalls[] = {
    {"setns", "joins another namespace through a descriptor"},
};

// Landlock's execute right is checked on the path an executed file was opened
// by, and a memfd lives on an internal mount no rule can name, which Landlock
// lets through (security/landlock/fs.c, is_nouser_or_private). A memfd sealed
// non-executable (MFD_NOEXEC_SEAL, Linux 6.3) has mode 0 and F_SEAL_EXEC, so
// neither execveat nor execve of /proc/self/fd/N can run it.
constexpr GroupRule kDescriptorExec[] = {
    {"memfd_create", "!(flags & MFD_NOEXEC_SEAL)",
     "an executable memfd runs code that was never under an executable path: Landlock does not see its internal mount"},
    {"execveat", "flags & AT_EMPTY_PATH",
     "runs the file behind a descriptor (fexecve), such as a memfd received from another process"},
};

// Uid 0 keeps what no capability grants: it owns root's files. prlimit64
// checks only that the caller's uid matches the target's (no capability, no
// LSM hook in Landlock), so a command launched as root could set the limits
// of any root process: the supervisor's and the janitor's descriptors to 0,
// which breaks the run's cleanup, or a host daemon's.
constexpr GroupRule kForeignLimits[] = {
    {"prlimit64", "pid != 0 && new_limit != 0",
     "sets another process's resource limits: for a command launched as root, any root process's, its supervisor's "
     "included"},
};

// An owner may set the set-user-ID and set-group-ID bits, and uid 0 owns
// root's files: a command launched as root would plant a program that runs
// as root for whoever starts it later, outside the sandbox. Landlock does not
// mediate file modes.
constexpr GroupRule kSetidModes[] = {
    {"chmod", "mode & (S_ISUID | S_ISGID)", "sets the set-user-ID or set-group-ID bit of a file"},
    {"fchmod", "mode & (S_ISUID | S_ISGID)", "the same through a descriptor"},
    {"fchmodat", "mode & (S_ISUID | S_ISGID)", "the same relative to a directory"},
    {"fchmodat2", "mode & (S_ISUID | S_ISGID)", "the same, with flags (Linux 6.6)"},
    {"open", "mode & (S_ISUID | S_ISGID)", "creates a file (O_CREAT, O_TMPFILE) with the bit already set"},
    {"openat", "mode & (S_ISUID | S_ISGID)", "the same relative to a directory"},
    {"creat", "mode & (S_ISUID | S_ISGID)", "the same"},
    {"mknod", "mode & (S_ISUID | S_ISGID)", "creates a file with the bit already set"},
    {"mknodat", "mode & (S_ISUID | S_ISGID)", "the same relative to a directory"},
};

// Also owner-only, and Landlock's IOCTL_DEV covers devices only: through a
// read-only descriptor a command launched as root could set the inode flags
// of root's files (no-dump, no-atime, synchronous writes, project ids).
constexpr GroupRule kInodeFlags[] = {
    {"ioctl", "request == FS_IOC_SETFLAGS", "sets a file's inode flags (chattr) through any descriptor"},
    {"ioctl", "request == FS_IOC_FSSETXATTR", "sets a file's extended inode flags and project id"},
};

// A mode no rule can see: openat2's is inside struct open_how. ENOSYS, as for
// clone3, so that callers fall back to openat (glibc never calls openat2).
constexpr GroupMember kHiddenModes[] = {
    {"openat2", "its mode (set-user-ID bits included) is inside struct open_how, out of a filter's reach"},
};

constexpr SyscallGroup kGroups[] = {
    {"startup", "what the dynamic loader and libc start-up need after execve", kStartup},
    {"file-read", "open and read files and directories, their metadata, and wait on descriptors", kFileRead},
    {"file-write", "create, write, rename, remove files and change their metadata", kFileWrite},
    {"process", "create, run and wait for processes and threads; read the own identity", kProcess},
    {"network", "create and use sockets (spec.network decides where they may go)", kNetwork},
    {"ipc", "pipes, futexes, message queues, semaphores and shared memory", kIpc},
    {"signal", "handle, wait for and send signals", kSignal},
    {"time", "read clocks, sleep and use timers", kTime},
    {"memory", "manage the process's own memory", kMemory},
    {"mount", "deny set: mount, unmount and change the root", kMount},
    {"privileged", "deny set: change identity, capabilities, namespaces and host-wide settings", kPrivileged},
    {"debug", "deny set: trace, read or control other processes", kDebug},
    {"kernel", "deny set: reconfigure the kernel (BPF, perf, modules, kexec, reboot, swap, keyrings, io_uring)",
     kKernel},
    {"tty-injection", "deny set: the ioctl requests that type into a terminal (TIOCSTI, TIOCLINUX)", {}, kTtyInjection},
    {"namespaces", "deny set: new namespaces from clone and unshare flags, and setns", kNamespaceCalls, kNamespaces},
    {"descriptor-exec", "deny set: run a program from a descriptor: an executable memfd, execveat with AT_EMPTY_PATH",
     {}, kDescriptorExec},
    {"foreign-limits", "deny set: set the resource limits of another process", {}, kForeignLimits},
    {"setid-modes", "deny set: give a file the set-user-ID or set-group-ID bit", {}, kSetidModes},
    {"inode-flags", "deny set: change a file's inode flags", {}, kInodeFlags},
    {"hidden-modes", "deny set: calls whose file mode a filter cannot read", kHiddenModes},
};

}  // namespace

llvm::ArrayRef<SyscallGroup> all_groups() { return kGroups; }

const SyscallGroup* find_group(llvm::StringRef name) {
  for (const SyscallGroup& group : kGroups)
    if (group.name == name) return &group;
  return nullptr;
}

const SyscallGroup& startup_group() { return *find_group("startup"); }

}  // namespace aasmc
