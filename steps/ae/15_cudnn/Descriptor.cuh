// A cuDNN descriptor, destroyed with its owner.
template <class Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class Descriptor {
 public:
  Descriptor() { CUDNN_CHECK(Create(&h_)); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { Destroy(h_); }
  operator Handle() const { return h_; }

 private:
  Handle h_ = nullptr;
};
