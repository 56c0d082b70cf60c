fn main() {
    std::process::exit(bcwire::commands::main());
}
