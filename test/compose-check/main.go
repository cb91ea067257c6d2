// Command compose-check loads a Compose file with the Compose specification's own loader
// (github.com/compose-spec/compose-go) and prints the normalised project as JSON on stdout.
// A file the specification rejects exits 1 with the loader's message on stderr.
//
//	compose-check docker-compose.temporal.yml
//
// Variables are interpolated from an empty environment (not this process's), so the output
// depends on the file alone.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check FILE")
		os.Exit(2)
	}
	file, err := filepath.Abs(os.Args[1])
	if err == nil {
		err = run(file)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "compose-check: %v\n", err)
		os.Exit(1)
	}
}

func run(file string) error {
	opts, err := cli.NewProjectOptions(
		[]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithResolvedPaths(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		return err
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	return out.Encode(project)
}
