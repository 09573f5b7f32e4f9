fn main() {
    println!("brr 0.6.0 - eBPF Runtime Reporter and Profiler by Tanel Poder (tanelpoder.com).");
}
