package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The launcher tests run "ringo bench" as the 4 ranks of a job that a real
// launcher from Debian starts — Open MPI's mpirun, MPICH's mpiexec, Slurm's
// srun (under a one-node Slurm the test starts) — and check that the ranks
// formed one communicator of 4 and that nothing was wrong. Each skips, saying
// so, only when its launcher is not installed (scripts/install-deps.sh
// installs them, so CI runs them all).

// launcherBenchFlags keep each run to a second or two.
var launcherBenchFlags = []string{"bench", "-b", "8", "-e", "64K", "-f", "8", "-n", "2", "-w", "1"}

// launcherVars are the variables a launcher sets: the test's own
// environment (a CI job under Slurm, say) must not leak them into the job.
var launcherVars = []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "NCCL_COMM_ID",
	"RINGO_RANK", "RINGO_NRANKS", "RINGO_COMM_ID", "RINGO_SECRET", "SLURM_", "PMI_", "PMIX_", "OMPI_", "MV2_", "MPI_LOCAL", "HYDRA_"}

// jobEnv is this process's environment without launcher variables, plus
// extra ("NAME=value").
func jobEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		clean := true
		for _, v := range launcherVars {
			if name == v || strings.HasSuffix(v, "_") && strings.HasPrefix(name, v) {
				clean = false
			}
		}
		if clean {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// needCommand skips the test unless name is installed.
func needCommand(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (Debian package %s; scripts/install-deps.sh installs it)", name, pkg)
	}
	return path
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runJob runs a launcher command line and checks that "ringo bench" ran as
// one communicator of 4 ranks that the launcher started, with nothing
// wrong.
func runJob(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	s := string(out)
	assert.Contains(t, s, "# ringo bench: 4 ranks (launcher)", "the ranks did not form one communicator of 4 through the launcher:\n%s", s)
	assert.Contains(t, s, "# Out of bounds values : 0 OK", "wrong results:\n%s", s)
	assert.Equal(t, 1, strings.Count(s, "# ringo bench:"), "more than one communicator reported:\n%s", s)
	t.Logf("%s: %v\n%s", filepath.Base(name), time.Since(start).Round(time.Millisecond), s)
}

func TestLaunchOpenMPI(t *testing.T) {
	mpirun := needCommand(t, "mpirun.openmpi", "openmpi-bin")
	bin := buildRingo(t)
	comm := fmt.Sprintf("NCCL_COMM_ID=127.0.0.1:%d", freePort(t))
	runJob(t, jobEnv(comm), mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-n", "4", "-x", "NCCL_COMM_ID", bin}, launcherBenchFlags...)...)
}

// TestLaunchMPICH also gives the job a secret of its own (RINGO_SECRET),
// which mpiexec hands every rank.
func TestLaunchMPICH(t *testing.T) {
	mpiexec := needCommand(t, "mpiexec.mpich", "mpich")
	bin := buildRingo(t)
	comm := fmt.Sprintf("NCCL_COMM_ID=127.0.0.1:%d", freePort(t))
	runJob(t, jobEnv(comm, "RINGO_SECRET="+rand.Text()), mpiexec, append([]string{"-n", "4", bin}, launcherBenchFlags...)...)
}

// TestLaunchSlurm starts a one-node Slurm (slurmctld, slurmd and munge with
// a fresh key, in a temporary directory, ports of their own) and runs
// "srun -n 4 ringo bench" twice: the root found through the step's node
// list and the port derived from the job (the first job's ID is chosen so
// that port is free), then through NCCL_COMM_ID.
func TestLaunchSlurm(t *testing.T) {
	srun := needCommand(t, "srun", "slurm-client")
	for _, c := range [][2]string{{"slurmctld", "slurmctld"}, {"slurmd", "slurmd"}, {"munged", "munge"}, {"sinfo", "slurm-client"}} {
		needCommand(t, c[0], c[1])
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmd must run as root to start tasks")
	}
	bin := buildRingo(t)
	job, port := slurmJobWithFreePort(t)
	conf := startSlurm(t, job)
	env := jobEnv("SLURM_CONF=" + conf)

	t.Run("nodelist", func(t *testing.T) {
		t.Logf("job %d, step 0: root at localhost:%d", job, port)
		runJob(t, env, srun, append([]string{"-n", "4", "--kill-on-bad-exit=1", "--time=5", bin}, launcherBenchFlags...)...)
	})
	t.Run("NCCL_COMM_ID", func(t *testing.T) {
		comm := fmt.Sprintf("NCCL_COMM_ID=127.0.0.1:%d", freePort(t))
		runJob(t, append(env, comm), srun, append([]string{"-n", "4", "--kill-on-bad-exit=1", "--time=5", bin}, launcherBenchFlags...)...)
	})
}

// slurmJobWithFreePort picks a job ID whose derived root port (step 0:
// 12000 + 20·(job mod 1000), bootstrap.LaunchFromEnv) is free now.
func slurmJobWithFreePort(t *testing.T) (job, port int) {
	t.Helper()
	for k := 1; k < 1000; k++ {
		port := 12000 + 20*k
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			ln.Close()
			return 1000 + k, port
		}
	}
	t.Fatal("no free port in 12000-32000 for the Slurm job's root")
	return 0, 0
}

// startSlurm starts munged, slurmctld and slurmd, each a child of the test
// stopped when it ends, waits until the node is idle, and returns the
// path of slurm.conf. The first job gets ID firstJob.
func startSlurm(t *testing.T, firstJob int) string {
	dir, err := os.MkdirTemp("", "ringo-slurm-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755)) // munged wants its socket's directory searchable by all
	for _, d := range []string{"state", "spool"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o700))
	}
	key := make([]byte, 1024)
	rand.Read(key)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600))
	sock := filepath.Join(dir, "munge.socket")
	startDaemon(t, dir, "munged", "-F", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "munged.log"),
		"--seed-file="+filepath.Join(dir, "munged.seed"))
	waitFor(t, dir, "munged's socket", func() bool { _, err := os.Stat(sock); return err == nil })

	conf := filepath.Join(dir, "slurm.conf")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=ringotest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[3]s
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/slurmctld.log
SlurmdLogFile=%[4]s/slurmd.log
FirstJobId=%[5]d
MailProg=/bin/true
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
`, freePort(t), freePort(t), sock, dir, firstJob)), 0o644))
	startDaemon(t, dir, "slurmctld", "-D", "-i", "-f", conf)
	startDaemon(t, dir, "slurmd", "-D", "-f", conf, "-N", "localhost")
	waitFor(t, dir, "the Slurm node to be idle", func() bool {
		cmd := exec.Command("sinfo", "-h", "-n", "localhost", "-o", "%T")
		cmd.Env = jobEnv("SLURM_CONF=" + conf)
		out, err := cmd.Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	})
	return conf
}

// startDaemon starts a daemon in the foreground, as a child of the test,
// and stops it (SIGTERM, then SIGKILL after 10 s) when the test ends, in
// the reverse order of starting.
func startDaemon(t *testing.T, dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = jobEnv()
	log, err := os.Create(filepath.Join(dir, name+".out"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start(), name)
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		log.Close()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// waitFor waits up to a minute for ready, showing the daemons' logs if it
// never is.
func waitFor(t *testing.T, dir, what string, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ready() {
			return
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.out"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var b strings.Builder
	for _, l := range append(logs, more...) {
		text, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(l), text)
	}
	t.Fatalf("waited a minute for %s:\n%s", what, b.String())
}
