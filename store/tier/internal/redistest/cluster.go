package redistest

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of servers started by a test.
type Cluster struct {
	Nodes []*Server
	t     testing.TB
}

// StartCluster starts masters × (1 + replicas) servers with cluster mode
// on, joins them with redis-cli --cluster create (replicas of each master
// on other servers) and waits until every node sees every slot served.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	n := masters * (1 + replicas)
	addrs := make([]string, n)
	for i := range n {
		s := start(t, []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", "{busport}", "--cluster-node-timeout", "3000",
			// replicas answer reads and take part in failovers at once
			"--cluster-replica-validity-factor", "0", "--repl-diskless-sync", "yes",
			"--repl-diskless-sync-delay", "0",
		})
		c.Nodes = append(c.Nodes, s)
		addrs[i] = s.Addr
	}
	_, cli := binaries(t)
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitStable(30 * time.Second)
	return c
}

// WaitStable waits until every node reports cluster_state:ok, agrees on
// the slots' owners and every replica is in sync with its master.
func (c *Cluster) WaitStable(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for time.Now().Before(deadline) {
		if why = c.unstable(); why == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("the cluster did not settle in %v: %s", timeout, why)
}

func (c *Cluster) unstable() string {
	var ref string
	for _, s := range c.Nodes {
		info, err := s.Cmd("CLUSTER", "INFO")
		if err != nil {
			return err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return s.Addr + " is not ok"
		}
		if masters := c.masterView(s); ref == "" {
			ref = masters
		} else if masters != ref {
			return fmt.Sprintf("%s sees masters %s, others %s", s.Addr, masters, ref)
		}
		if role := s.Info("replication"); role["role"] == "slave" && role["master_link_status"] != "up" {
			return s.Addr + "'s link to its master is down"
		}
	}
	return ""
}

// masterView returns what node s believes about the masters: their
// addresses and slots, in a canonical form.
func (c *Cluster) masterView(s *Server) string {
	out, err := s.Cmd("CLUSTER", "NODES")
	if err != nil {
		return err.Error()
	}
	var ms []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.Contains(f[2], "master") && !strings.Contains(f[2], "fail") {
			addr, _, _ := strings.Cut(f[1], "@")
			ms = append(ms, addr+" "+strings.Join(f[8:], ","))
		}
	}
	sort.Strings(ms)
	return strings.Join(ms, "; ")
}

// ID returns node s's cluster node ID.
func (c *Cluster) ID(s *Server) string {
	c.t.Helper()
	return s.MustCmd("CLUSTER", "MYID")
}

// Slot returns the hash slot of key.
func (c *Cluster) Slot(key string) int {
	c.t.Helper()
	n, err := strconv.Atoi(c.Nodes[0].MustCmd("CLUSTER", "KEYSLOT", key))
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// MasterOf returns the node that serves slot.
func (c *Cluster) MasterOf(slot int) *Server {
	c.t.Helper()
	for _, s := range c.Nodes {
		if c.IsMaster(s) && c.serves(s, slot) {
			return s
		}
	}
	c.t.Fatalf("no master serves slot %d", slot)
	return nil
}

// IsMaster reports whether s is a master.
func (c *Cluster) IsMaster(s *Server) bool { return s.Info("replication")["role"] == "master" }

// serves reports whether s's own line in CLUSTER NODES lists slot.
func (c *Cluster) serves(s *Server, slot int) bool {
	for _, line := range strings.Split(s.MustCmd("CLUSTER", "NODES"), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "myself") {
			continue
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being imported or migrated
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, _ := strconv.Atoi(lo)
			b, _ := strconv.Atoi(hi)
			if slot >= a && slot <= b {
				return true
			}
		}
	}
	return false
}

// ReplicaOf returns a replica of master.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	c.t.Helper()
	id := c.ID(master)
	for _, s := range c.Nodes {
		if s != master && strings.Contains(s.MustCmd("CLUSTER", "NODES"), "myself,slave "+id) {
			return s
		}
	}
	c.t.Fatalf("%s has no replica", master.Addr)
	return nil
}

// Failover promotes replica to master of its shard with a manual
// CLUSTER FAILOVER (the old master, in sync, becomes its replica) and
// waits until the cluster is stable again.
func (c *Cluster) Failover(replica *Server) {
	c.t.Helper()
	replica.MustCmd("CLUSTER", "FAILOVER")
	deadline := time.Now().Add(30 * time.Second)
	for !c.IsMaster(replica) {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s did not take over", replica.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.WaitStable(30 * time.Second)
}

// MoveSlots moves each slot and its keys from its master to master to,
// as redis-cli --cluster reshard does: IMPORTING, MIGRATING, MIGRATE in
// batches, then NODE on every master; then it waits until the cluster is
// stable.
func (c *Cluster) MoveSlots(to *Server, slots ...int) {
	c.t.Helper()
	for _, slot := range slots {
		c.moveSlot(slot, to)
	}
	c.WaitStable(30 * time.Second)
}

func (c *Cluster) moveSlot(slot int, to *Server) {
	c.t.Helper()
	from := c.MasterOf(slot)
	if from == to {
		return
	}
	s := strconv.Itoa(slot)
	to.MustCmd("CLUSTER", "SETSLOT", s, "IMPORTING", c.ID(from))
	from.MustCmd("CLUSTER", "SETSLOT", s, "MIGRATING", c.ID(to))
	for {
		keys := strings.Fields(from.MustCmd("CLUSTER", "GETKEYSINSLOT", s, "100"))
		if len(keys) == 0 {
			break
		}
		args := append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(to.Port), "", "0", "5000", "KEYS"}, keys...)
		from.MustCmd(args...)
	}
	to.MustCmd("CLUSTER", "SETSLOT", s, "NODE", c.ID(to))
	from.MustCmd("CLUSTER", "SETSLOT", s, "NODE", c.ID(to))
	for _, n := range c.Nodes {
		if n != from && n != to && c.IsMaster(n) {
			n.MustCmd("CLUSTER", "SETSLOT", s, "NODE", c.ID(to))
		}
	}
}
