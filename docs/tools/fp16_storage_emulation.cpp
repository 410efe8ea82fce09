// Host emulation of half-precision storage schemes on the bench's point workload (docs/variants.md,
// "Accurate half storage"). Not part of the build: a study tool, single file, no dependencies.
//   g++ -O3 -march=native -fopenmp -o fp16_emulation docs/tools/fp16_storage_emulation.cpp
//   ./fp16_emulation N STEPS [AMPLITUDE [MASK]]      (prints CSV: step, error of each scheme)
// The medium, step, wavelet and source scaling are the bench's (solvers/drivers/bench_workloads.cpp):
// 2000 m/s, 10 m cells, Courant 0.3985, a 16 Hz Ricker delayed 1.2/f0, injected as
// v2dt2 * w(t) / h^3 into the centre cell before each step; N^3 cells with zero (rigid) halos,
// so a run longer than N/0.8 steps goes on with reflections. AMPLITUDE scales the source (a
// smaller one mimics the amplitudes of a larger grid: 1/r). MASK selects schemes (bit s; 0 all).
// Each scheme runs the float32 step on decoded values and stores its output in its format:
//   half/half    IEEE half fields and v2dt2 (fp16_storage)
//   half/f32     half fields, float v2dt2
//   halfSR/f32   half fields rounded stochastically (unbiased), float v2dt2
//   f32/half     float fields, half v2dt2 (half_v2dt2)
//   bfp16/f32    block floating point: int16 mantissas with one power-of-two exponent per 64
//                cells of an x row (2 bytes per value + 1/64 of a byte), float v2dt2
//   bfp16/u16e   the same, v2dt2 as a 16-bit mantissa with its own exponent
//   bfp16x16/... the same with one exponent per 16 cells (1/16 of a byte per value)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
static const double kC[5] = {-205.0/72, 8.0/5, -1.0/5, 8.0/315, -1.0/560};
static inline float h_rn(float x){ return (float)(_Float16)x; }
static inline uint64_t mix(uint64_t z){ z+=0x9E3779B97F4A7C15ull; z=(z^(z>>30))*0xBF58476D1CE4E5B9ull; z=(z^(z>>27))*0x94D049BB133111EBull; return z^(z>>31);}
static inline float h_sr(float x, uint64_t key){
  _Float16 h=(_Float16)x; float hf=(float)h; if(hf==x) return hf;
  uint16_t b; memcpy(&b,&h,2); uint16_t o;
  if((b&0x7fff)==0) o = x>0?0x0001:0x8001;
  else if(!(b&0x8000)) o = x>hf? b+1 : b-1;
  else o = x>hf? b-1 : b+1;
  _Float16 oh; memcpy(&oh,&o,2); float of=(float)oh;
  double p = fabs((double)x-hf)/fabs((double)of-hf);
  double r = (mix(key)>>11)*(1.0/9007199254740992.0);
  return r<p? of: hf;
}
int main(int argc,char**argv){
  int N=argc>1?atoi(argv[1]):128, steps=argc>2?atoi(argv[2]):1000; double amp=argc>3?atof(argv[3]):1.0; int mask=argc>4?atoi(argv[4]):0;
  const int H=4, P=N+2*H; const size_t plane=(size_t)P*P, size=plane*P;
  const double h=10, v=2000; const double dt=0.3985*h/v; // as the bench (Courant 0.3985)
  const double f0=v/(5*h*2.5), t0=1.2/f0;
  float c0=float(kC[0]*3/(h*h)); float w[5]; for(int r=1;r<5;++r) w[r]=float(kC[r]/(h*h));
  const float v2f=float(v*v*dt*dt);
  // model quantisations
  const float v2h=h_rn(v2f);
  int e; frexp(v2f,&e); const float v2b=float(ldexp(nearbyint(ldexp(v2f,16-e)),e-16));
  printf("# N=%d dt=%g v2dt2=%.9g half=%.9g (rel %.3g) u16exp=%.9g (rel %.3g)\n",N,dt,v2f,v2h,(v2h-v2f)/v2f,v2b,(v2b-v2f)/v2f);
  enum {REF,H16,H16_VF,H16SR_VF,F32_VH,BFP_VF,BFP_VB,BFP16_VF,BFP16_VB,NS};
  const char* names[NS]={"ref","half/half","half/f32","halfSR/f32","f32/half","bfp16/f32","bfp16/u16e","bfp16x16/f32","bfp16x16/u16e"};
  float v2[NS]={v2f,v2h,v2f,v2f,v2h,v2f,v2b,v2f,v2b};
  std::vector<std::vector<float>> cur(NS,std::vector<float>(size,0.f)), prev=cur;
  auto idx=[&](int x,int y,int z){return (size_t)(z+H)*plane+(size_t)(y+H)*P+(x+H);};
  const int sc=N/2; const float scale=float(1.0/(h*h*h));
  std::vector<float> nxt(size);
  printf("step");for(int s=1;s<NS;++s)printf(",%s",names[s]);printf(",maxabs\n");
  for(int n=0;n<steps;++n){
    double t=n*dt, a=M_PI*f0*(t-t0); float wav=float((1-2*a*a)*exp(-a*a));
    for(int s=0;s<NS;++s){
      if(mask && !((mask>>s)&1)) continue;
      auto &c=cur[s], &p=prev[s];
      // inject (float arithmetic on decoded value, stored again)
      size_t ci=idx(sc,sc,sc); float val=c[ci]+(v2[s]*(scale*float(amp)*wav));
      c[ci]=val; // requantised below with the step output convention
      if(s==H16||s==H16_VF||s==H16SR_VF) c[ci]=h_rn(val);
      // (bfp: requantise the segment of the source; approximate with its own exponent)
      #pragma omp parallel for
      for(int z=0;z<N;++z)for(int y=0;y<N;++y){
        for(int x=0;x<N;++x){ size_t i=idx(x,y,z);
          float lap=c0*c[i];
          for(int r=1;r<=4;++r){ lap+=w[r]*(c[i-r]+c[i+r]); lap+=w[r]*(c[i-r*P]+c[i+r*P]); lap+=w[r]*(c[i-r*plane]+c[i+r*plane]); }
          float o=2.0f*c[i]-p[i]+v2[s]*lap;
          if(s==H16||s==H16_VF) o=h_rn(o);
          else if(s==H16SR_VF) o=h_sr(o,(uint64_t)n*0x100000000ull ^ i);
          nxt[i]=o;}
        if(s==BFP_VF||s==BFP_VB||s==BFP16_VF||s==BFP16_VB){ const int B=(s==BFP_VF||s==BFP_VB)?64:16; for(int x0=0;x0<N;x0+=B){ int x1=std::min(N,x0+B); float m=0; for(int x=x0;x<x1;++x) m=std::max(m,fabsf(nxt[idx(x,y,z)]));
            if(m==0) continue; int ee; frexp(m,&ee); // m < 2^ee
            for(int x=x0;x<x1;++x){ size_t i=idx(x,y,z); float q=nearbyintf(ldexpf(nxt[i],15-ee)); q=std::min(32767.f,std::max(-32767.f,q)); nxt[i]=ldexpf(q,ee-15);} } }
        for(int x=0;x<N;++x){ size_t i=idx(x,y,z); p[i]=nxt[i]; }
      }
      std::swap(c,p);
    }
    if((n+1)%25==0||n==steps-1){
      printf("%d",n+1); double rr=0,mx=0; for(size_t i=0;i<size;++i){rr+=double(cur[0][i])*cur[0][i]; mx=std::max(mx,(double)fabsf(cur[0][i]));}
      for(int s=1;s<NS;++s){double d=0; for(size_t i=0;i<size;++i){double q=double(cur[s][i])-cur[0][i]; d+=q*q;} printf(",%.3e",sqrt(d/rr));}
      printf(",%.3e\n",mx); fflush(stdout);}
  }
}
