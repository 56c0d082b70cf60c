fn main() {
    println!("bcwire");
}
