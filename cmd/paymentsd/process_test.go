package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// A process that starts while its database is down (restarting, failing
// over) waits for it and comes up when it answers; one that cannot reach
// it within the wait gives up saying so; a schema too old is refused at
// once, without waiting.
func TestStartingProcessWaitsForItsDatabase(t *testing.T) {
	ctx := context.Background()
	db, err := url.Parse(storetest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	// The process is pointed at a port where nothing listens yet: the
	// database "restarting". After a while the port forwards to it.
	down := fmt.Sprintf("127.0.0.1:%d", freeport.Pick())
	behind := *db
	behind.Host = down
	const restart = 1500 * time.Millisecond
	go func() {
		time.Sleep(restart) // not a wait: the database is down this long, which the process must wait out
		ln, err := net.Listen("tcp", down)
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, db.Host)
		}
	}()
	start := time.Now()
	if err := checkSchema(ctx, behind.String(), 30*time.Second); err != nil {
		t.Fatalf("the process did not wait for its database: %v", err)
	}
	if waited := time.Since(start); waited < restart {
		t.Fatalf("the schema was read after %s, before the database was back", waited)
	}

	never := *db
	never.Host = fmt.Sprintf("127.0.0.1:%d", freeport.Pick())
	start = time.Now()
	err = checkSchema(ctx, never.String(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "connect") || time.Since(start) > 10*time.Second {
		t.Fatalf("a database never reached: %v after %s", err, time.Since(start))
	}

	start = time.Now()
	err = checkSchema(ctx, storetest.NewEmptyDB(t), 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "run `paymentsd migrate` first") || time.Since(start) > 10*time.Second {
		t.Fatalf("a schema too old: %v after %s", err, time.Since(start))
	}
}

func forward(c net.Conn, to string) {
	defer c.Close()
	up, err := net.Dial("tcp", to)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}
