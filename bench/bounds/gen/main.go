// Command gen makes the inputs of bench/bounds: go run ./bench/bounds/gen
// zip|tar|text FILE writes a zip of one 2 GiB entry (a zip bomb), a tar of
// 1,000,000 small files, or 300 MB of text (for a git blob).
package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"fmt"
	"os"
)

func main() {
	switch os.Args[1] {
	case "zip": // a zip of one 2 GiB entry
		f, _ := os.Create(os.Args[2])
		zw := zip.NewWriter(f)
		w, _ := zw.Create("big.log")
		bw := bufio.NewWriterSize(w, 1<<20)
		n := int64(0)
		for i := 0; n < 2<<30; i++ {
			var s string
			if i%100000 == 0 {
				s = fmt.Sprintf("marker %09d\n", i)
			} else {
				s = "the same line again and again, as a bomb has it.\n"
			}
			k, _ := bw.WriteString(s)
			n += int64(k)
		}
		bw.Flush()
		zw.Close()
		f.Close()
	case "text": // 300 MB of text for a blob
		f, _ := os.Create(os.Args[2])
		bw := bufio.NewWriterSize(f, 1<<20)
		n := 0
		for i := 0; n < 300<<20; i++ {
			k, _ := fmt.Fprintf(bw, "line %09d of a large blob, mostly the same text\n", i%1000)
			n += k
		}
		bw.Flush()
		f.Close()
	case "tar": // a tar of 1,000,000 entries
		f, _ := os.Create(os.Args[2])
		bw := bufio.NewWriterSize(f, 1<<20)
		tw := tar.NewWriter(bw)
		for i := range 1000000 {
			data := []byte(fmt.Sprintf("%d\n", i))
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/f%07d.txt", i%1000, i), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
			tw.Write(data)
		}
		tw.Close()
		bw.Flush()
		f.Close()
	}
}
